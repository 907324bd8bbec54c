"""What a runtime's files are called on each platform, and how their format is told.

One place answers, per platform, the questions the loader (_runtime.py), the
installer (_install.py) and the build (native/_build.py: the link line, the cache's
library names, the manifest's file list) ask:

| platform | core library | BLAS beside it | "beside me" in the rpath | binary format | compiler | threads at the link |
|---|---|---|---|---|---|---|
| linux | `libmlrt_core.so` | `libscipy_openblas*.so` | `$ORIGIN` | ELF | `cc` | `-pthread` |
| darwin | `libmlrt_core.dylib` | `libscipy_openblas*.dylib` | `@loader_path` | Mach-O | `cc` (clang) | `-pthread` |
| win32 | `mlrt_core.dll` | `libscipy_openblas*.dll` | none | PE | `gcc` (MinGW-w64) | winpthreads and libgcc linked in statically |

Windows has no rpath: the loader adds the runtime folder to the DLL search path
(`os.add_dll_directory`) for the dlopen, so the BLAS beside the library is found.
The core library on Windows drops the `lib` prefix, as Windows DLLs are named
(`mlrt_core.dll`); the BLAS keeps the name its wheel (scipy-openblas32) gives it.
On Windows the core is built by MinGW-w64's gcc (there is no `cc`; the C core is
C11 with gcc's vector extensions and attributes, which MSVC does not take), and its
threads and gcc runtime are linked into the DLL, so that it needs only OpenBLAS beside
it and the system's own DLLs.

Platforms are named as `sys.platform` names them ("linux", "darwin", "win32") or as
`platform.system()` does ("Linux", "Darwin", "Windows"); any other is refused with
UnsupportedPlatform.  The format check runs before dlopen: dlopen of a truncated or
foreign file can crash the process instead of failing.  For ELF it also refuses a
file its own headers say is truncated.

This module imports nothing but the standard library: the build loads it by its path,
before mlrt is installed.
"""

import struct
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PlatformNames", "UnsupportedPlatform", "host_names", "platform_names"]


class UnsupportedPlatform(ValueError):
    """A platform mlrt has no runtime naming for."""


@dataclass(frozen=True)
class PlatformNames:
    """The runtime's file names and binary format on one platform."""

    system: str         # "linux", "darwin" or "windows"
    suffix: str         # a shared library's suffix: ".so", ".dylib", ".dll"
    library: str        # the core library's file name
    rpath: str | None   # the link's rpath token for "the library's own folder"; None: no rpath (Windows)
    format: str         # "ELF", "Mach-O", "PE"
    magics: tuple       # the first bytes a file of that format starts with
    compiler: str = "cc"                 # the C compiler a build uses when CC names none
    threads: tuple = ("-pthread",)       # the link's threads (and compiler runtime) flags

    @property
    def blas_glob(self) -> str:
        """The glob of the BLAS library beside the core library."""
        return f"libscipy_openblas*{self.suffix}"

    def blas_file(self, name: str) -> str:
        """The file name of the library the linker's -l<name> finds (scipy-openblas32's
        get_library(): "scipy_openblas" -> libscipy_openblas.so)."""
        return f"lib{name}{self.suffix}"

    def library_files(self, folder: Path) -> list[str]:
        """The shared libraries of a runtime folder (the core library and its BLAS), sorted."""
        folder = Path(folder)
        names = {p.name for p in folder.glob(self.blas_glob)}
        if (folder / self.library).is_file():
            names.add(self.library)
        return sorted(names)

    def binary_problem(self, path: Path) -> str | None:
        """Why path is not a whole shared library of this platform's format, or None;
        the reason reads after "<file> is " ("not an ELF file")."""
        path = Path(path)
        try:
            size = path.stat().st_size
            with open(path, "rb") as f:
                if self.format == "ELF":
                    return _elf_problem(f, size)
                head = f.read(64)
                if not head.startswith(self.magics):
                    return f"not {_WITH_ARTICLE[self.format]} file"
                if self.format == "PE":
                    return _pe_problem(f, head)
        except OSError as exc:
            return f"unreadable: {exc}"
        return None


def _elf_problem(f, size: int) -> str | None:
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF":
        return "not an ELF file"
    if head[4] != 2:
        return "not a 64-bit ELF file"
    order = "<" if head[5] == 1 else ">"
    phoff, shoff = struct.unpack_from(order + "QQ", head, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 54)
    end = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
    if end > size:
        return f"truncated ({size} bytes; its headers reach byte {end})"
    f.seek(phoff)
    table = f.read(phentsize * phnum)
    for i in range(phnum):
        p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack_from(order + "IIQQQQ", table, i * phentsize)
        if p_type == 1 and p_offset + p_filesz > size:   # PT_LOAD
            return f"truncated ({size} bytes; a loadable segment reaches byte {p_offset + p_filesz})"
    return None


def _pe_problem(f, head: bytes) -> str | None:
    """An "MZ" file is a PE image when the offset at 0x3c points at "PE\\0\\0"."""
    if len(head) < 64:
        return "not a PE file (truncated DOS header)"
    (pe_offset,) = struct.unpack_from("<I", head, 0x3C)
    f.seek(pe_offset)
    if f.read(4) != b"PE\0\0":
        return "not a PE file (an MS-DOS program without a PE header)"
    return None


_WITH_ARTICLE = {"ELF": "an ELF", "Mach-O": "a Mach-O", "PE": "a PE"}
# Mach-O: 64- and 32-bit, either byte order, and universal ("fat") files holding several
_MACHO = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce",
          b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf")

_PLATFORMS = {
    "linux": PlatformNames("linux", ".so", "libmlrt_core.so", "$ORIGIN", "ELF", (b"\x7fELF",)),
    "darwin": PlatformNames("darwin", ".dylib", "libmlrt_core.dylib", "@loader_path", "Mach-O", _MACHO),
    "windows": PlatformNames("windows", ".dll", "mlrt_core.dll", None, "PE", (b"MZ",), compiler="gcc",
                             threads=("-static-libgcc", "-Wl,-Bstatic", "-lwinpthread", "-Wl,-Bdynamic")),
}
_ALIASES = {"win32": "windows"}


def platform_names(system: str) -> PlatformNames:
    """The names for a platform as sys.platform ("linux", "darwin", "win32") or
    platform.system() ("Linux", "Darwin", "Windows") spells it; UnsupportedPlatform
    for any other."""
    key = _ALIASES.get(system.lower(), system.lower())
    if key not in _PLATFORMS:
        raise UnsupportedPlatform(f"mlrt has no native runtime for platform {system!r} "
                                  "(supported: linux, darwin, win32)")
    return _PLATFORMS[key]


def host_names() -> PlatformNames:
    """The names for the platform this process runs on."""
    return platform_names(sys.platform)
