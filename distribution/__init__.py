"""mlrt.distribution: which native runtime this process uses, and loading it.

The bottom of the stack: it knows the runtime folder layout and the C header, and
imports nothing from the layers above.  A runtime is bundled (inside the package,
or copied into an app's folder with `mlrt runtime bundle DIR`) or system-installed
(`mlrt runtime install [--prefix P]`); MLRT_RUNTIME=bundled|system|auto|<path> or
select_runtime(...) before first use chooses; current_runtime() tells which.
The runtime's file names, rpath token and binary format are the platform's
(platforms.py: libmlrt_core.so on Linux, libmlrt_core.dylib on macOS, mlrt_core.dll on
Windows).
"""

from .._lazy import lazy as _lazy

__all__ = ["LIBRARY_NAME", "MANIFEST_NAME", "Runtime", "bundle", "check_folder", "current_runtime", "install",
           "installed", "load", "read_manifest", "select_runtime", "system_prefix", "system_root", "uninstall"]


# imported when first asked for: the layers above import this package with their own
# import, and the runtime is found and loaded later, by the first session
__getattr__, __dir__ = _lazy(__name__, globals(), {
    **dict.fromkeys(("bundle", "install", "installed", "uninstall"), "._install"),
    **dict.fromkeys(("LIBRARY_NAME", "MANIFEST_NAME", "Runtime", "check_folder", "current_runtime", "load",
                     "read_manifest", "select_runtime", "system_prefix", "system_root"), "._runtime")})
