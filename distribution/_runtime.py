"""Finding, checking and loading a native runtime.

A runtime is a folder holding libmlrt_core.so, the BLAS it links, and the C headers
that describe its ABI (include/mlrt.h and the kernels' parameter headers).  The
copy inside the installed package is the *bundled* runtime.  MLRT_RUNTIME selects
one: "bundled" (default), or a path to a runtime folder or library file.  The
system-installed kind and "auto" come with the distribution issue; they plug in
here as more candidates.

Loading is cffi ABI mode (ffi.dlopen), so any compatible copy can be swapped in
without rebuilding the SDK.  The ABI number is checked before any other call.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import RuntimeLoadError

LIBRARY_NAME = "libmlrt_core.so"
_BUNDLED_DIR = Path(__file__).resolve().parent.parent / "native"
_DEFINE = re.compile(r"^#define\s+\w+\s+-?\d+\s*$")


@dataclass(frozen=True)
class Runtime:
    """A located runtime; `ffi` and `lib` are set once it is loaded."""

    kind: str
    path: Path
    version: str = ""
    abi: int = 0
    opsets: dict = field(default_factory=dict)
    providers: tuple = ("CPUExecutionProvider",)
    ffi: object = field(default=None, repr=False, compare=False)
    lib: object = field(default=None, repr=False, compare=False)


def _header_dir(lib_path: Path) -> Path:
    folder = lib_path.parent
    return folder if (folder / "include" / "mlrt.h").exists() else _BUNDLED_DIR


def cdef_text(header_dir: Path) -> str:
    """The ABI header plus every kernel parameter header, as cffi-readable text."""
    files = [header_dir / "include" / "mlrt.h", *sorted((header_dir / "kernels").glob("*.h"))]
    lines = []
    for f in files:
        for line in f.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith("#") and not _DEFINE.match(stripped):
                continue
            lines.append(line)
    return "\n".join(lines)


def _expected_abi() -> int:
    text = (_BUNDLED_DIR / "include" / "mlrt.h").read_text()
    return int(re.search(r"#define\s+MLRT_ABI_VERSION\s+(\d+)", text).group(1))


def _candidate(spec: str) -> tuple[str, Path]:
    if spec in ("", "bundled"):
        return "bundled", _BUNDLED_DIR / LIBRARY_NAME
    path = Path(spec).expanduser()
    return "path", (path / LIBRARY_NAME if path.is_dir() else path)


def _dlopen_quiet_blas(ffi, lib_path: Path):
    """dlopen with OPENBLAS_NUM_THREADS=1 for the duration: the runtime's own copy of
    OpenBLAS then starts no idle threads of its own (mlrt runs BLAS single-threaded
    inside its pool).  The variable is restored at once, so other libraries are not
    affected."""
    old = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        return ffi.dlopen(str(lib_path))
    finally:
        if old is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = old


def load(spec: str | None = None) -> Runtime:
    """Load the runtime named by spec (default: $MLRT_RUNTIME or "bundled")."""
    import cffi

    spec = os.environ.get("MLRT_RUNTIME", "bundled") if spec is None else spec
    kind, lib_path = _candidate(spec)
    if not lib_path.exists():
        hint = ("the package was installed without its native build; reinstall with `pip install .`"
                if kind == "bundled" else "check MLRT_RUNTIME")
        raise RuntimeLoadError(f"{kind} runtime: no library at {lib_path} ({hint})")
    ffi = cffi.FFI()
    try:
        ffi.cdef(cdef_text(_header_dir(lib_path)))
        lib = _dlopen_quiet_blas(ffi, lib_path)
    except (OSError, cffi.CDefError, cffi.FFIError) as exc:
        raise RuntimeLoadError(f"{kind} runtime at {lib_path} cannot be loaded: {exc}") from exc
    expected = _expected_abi()
    abi = lib.mlrt_abi_version()
    if abi != expected:
        raise RuntimeLoadError(f"{kind} runtime at {lib_path} has ABI {abi}; this SDK needs ABI {expected}")
    version = ffi.string(lib.mlrt_version()).decode()
    return Runtime(kind=kind, path=lib_path, version=version, abi=abi, ffi=ffi, lib=lib)


_current: Runtime | None = None
_lock = threading.Lock()


def current_runtime() -> Runtime:
    """The runtime this process uses, loaded on first call."""
    global _current
    with _lock:
        if _current is None:
            _current = load()
        return _current
