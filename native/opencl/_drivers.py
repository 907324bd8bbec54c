"""Where OpenCL drivers come from: the system's, and the CPU runtime that pip installs
with mlrt, which mlrt registers itself.

pyopencl's ICD loader (ocl-icd) loads the drivers named by the `.icd` files of one
folder: $OCL_ICD_VENDORS, else /etc/OpenCL/vendors (pyopencl's wheel also reads its
own `.libs` folder, where pocl-binary-distribution puts PoCL).  Intel's CPU runtime
from pip (`opencl-rt`, a dependency of mlrt on x86-64 Linux) puts `libintelocl.so`
into the environment's `lib/` folder and no `.icd` file anywhere, so no loader finds
it.  Before the process's first OpenCL call, `register()` makes a folder holding a
copy of every `.icd` file the loader would have read plus one naming each pip runtime
by absolute path, and points OCL_ICD_VENDORS at it for this process (and the build
children it starts).  The folder is written inside the virtual environment
(`<sys.prefix>/etc/mlrt/opencl-vendors-<hash>`), or in mlrt's OpenCL cache folder
outside one or when the environment is read-only; nothing under /etc, no root.  It
is named by a hash of its content, so it is written once and reused.

A process that made its first OpenCL call before importing mlrt's OpenCL provider has
its loader set up already; it sees only the drivers it saw then.

pyopencl, the binding over that loader, is imported here once for the whole provider
(`cl`, `cl_tools`); where it cannot load they are None and `IMPORT_ERROR` says why, and
the provider reports itself unavailable.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path

try:
    import pyopencl as cl
    import pyopencl.tools as cl_tools
except Exception as exc:  # pragma: no cover - depends on the machine
    cl, cl_tools, IMPORT_ERROR = None, None, exc
else:
    IMPORT_ERROR = None

# CPU runtimes that pip installs without registering them with the ICD loader, in order
# of preference: (distribution name, driver library).
PIP_RUNTIMES = (("opencl-rt", "libintelocl.so"), ("intel-opencl-rt", "libintelocl.so"))
SYSTEM_VENDORS = "/etc/OpenCL/vendors"
_registered: list[str] | None = None


def pip_runtimes() -> list[Path]:
    """Driver libraries of the pip-installed runtimes present, most preferred first."""
    found = []
    for dist_name, library in PIP_RUNTIMES:
        try:
            files = importlib.metadata.distribution(dist_name).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for f in files:
            if f.name == library:
                path = Path(f.locate()).resolve()
                if path.is_file() and path not in found:
                    found.append(path)
    return found


def _vendor_files() -> dict[str, str]:
    """The `.icd` files the loader would read now: name -> content (a library path)."""
    where = os.environ.get("OCL_ICD_VENDORS") or SYSTEM_VENDORS
    folder = Path(where)
    if folder.is_file():  # ocl-icd also takes one file: an .icd, or the driver itself
        try:
            return {folder.name: folder.read_text() if folder.suffix == ".icd" else str(folder)}
        except (OSError, UnicodeDecodeError):
            return {}  # unreadable: the loader will not use it either
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return {}
    out = {}
    for entry in entries:
        if entry.suffix == ".icd":
            try:
                out[entry.name] = entry.read_text()
            except (OSError, UnicodeDecodeError):
                continue
    return out


def register(fallback_folder: Path) -> list[str]:
    """Make the pip runtimes visible to the ICD loader (once per process); returns the
    libraries registered (empty when there are none or all are visible already)."""
    global _registered
    if _registered is not None:
        return _registered
    _registered = []
    vendors = _vendor_files()
    named = {content.strip() for content in vendors.values()}
    extra = {f"mlrt-{lib.stem}-{i}.icd": str(lib) for i, lib in enumerate(pip_runtimes()) if str(lib) not in named}
    if not extra:
        return _registered
    files = {**vendors, **extra}
    digest = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:16]
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)  # never under a system Python's /usr
    for parent in ([Path(sys.prefix) / "etc" / "mlrt"] if in_venv else []) + [Path(fallback_folder)]:
        folder = parent / f"opencl-vendors-{digest}"
        if folder.is_dir() or _write_folder(folder, files):
            os.environ["OCL_ICD_VENDORS"] = str(folder)
            _registered = list(extra.values())
            break
    return _registered


def _write_folder(folder: Path, files: dict[str, str]) -> bool:
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".staging-"))
        for name, content in files.items():
            (staging / name).write_text(content.strip() + "\n")
        try:
            os.rename(staging, folder)
        except OSError:  # another process wrote the same folder first
            for f in staging.iterdir():
                f.unlink()
            staging.rmdir()
        return folder.is_dir()
    except OSError:
        return False
