"""Finding, checking and loading a native runtime.

A runtime is a folder holding libmlrt_core.so, the BLAS it links (found through an
$ORIGIN rpath), the C headers that describe its ABI (include/mlrt.h and the kernels'
parameter headers, kernels/*.h) and manifest.json (version, ABI number, opset range
per domain, providers, build flags, sha256 of every other file).

Kinds: the copy inside the installed package is the *bundled* runtime; `mlrt runtime
install` puts *system* runtimes under PREFIX/lib/mlrt/<version>/ (PREFIX from
MLRT_SYSTEM_PREFIX, default /usr/local); any runtime folder or library file can be
named by *path*.  MLRT_RUNTIME (or select_runtime before first use) chooses:
"bundled" (default), "system" (the newest installed), "system:<version>", "auto"
(the newest system runtime that passes the checks, else the bundled one) or a path.

Checks, in order, before a runtime is used: the library exists; the manifest's ABI
number; the sha256 of every file the manifest lists (before dlopen, so a truncated
or altered library is refused rather than mapped; _cache.py remembers the digests
of files whose stamps have not changed since); dlopen (an OSError becomes
RuntimeLoadError); the library's own ABI number before any other call.  Every
failure is a RuntimeLoadError naming the path and the reason; under "auto" the
next candidate is tried.

File names and the binary format are the platform's (platforms.py: libmlrt_core.so
and ELF on Linux, libmlrt_core.dylib and Mach-O on macOS, mlrt_core.dll and PE on
Windows, where the runtime folder joins the DLL search path for the dlopen).

Loading is cffi ABI mode (ffi.dlopen), so any compatible copy can be swapped in
without rebuilding the SDK.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import RuntimeLoadError
from . import _cache, platforms
from ._cache import sha256_file  # noqa: F401  (part of this module's interface)

try:
    HOST = platforms.host_names()
except platforms.UnsupportedPlatform as _exc:
    raise RuntimeLoadError(str(_exc)) from None
LIBRARY_NAME = HOST.library
MANIFEST_NAME = "manifest.json"
DEFAULT_PREFIX = "/usr/local"
_BUNDLED_DIR = Path(__file__).resolve().parent.parent / "native"
_DEFINE = re.compile(r"^#define\s+\w+\s+-?\d+\s*$")


@dataclass(frozen=True)
class Runtime:
    """A located runtime; `ffi` and `lib` are set once it is loaded.

    `path` is the library file; `folder` the runtime folder holding it."""

    kind: str
    path: Path
    version: str = ""
    abi: int = 0
    opsets: dict = field(default_factory=dict)
    providers: tuple = ("CPUExecutionProvider",)
    manifest: dict | None = field(default=None, repr=False, compare=False)
    ffi: object = field(default=None, repr=False, compare=False)
    lib: object = field(default=None, repr=False, compare=False)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def describe(self) -> str:
        return f"{self.kind} runtime {self.version} (ABI {self.abi}) at {self.path}"


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


def system_prefix(prefix: str | os.PathLike | None = None) -> Path:
    """The system prefix: prefix, else $MLRT_SYSTEM_PREFIX, else /usr/local."""
    return Path(prefix or os.environ.get("MLRT_SYSTEM_PREFIX") or DEFAULT_PREFIX).expanduser()


def system_root(prefix=None) -> Path:
    """PREFIX/lib/mlrt: one folder per installed version."""
    return system_prefix(prefix) / "lib" / "mlrt"


def version_key(version: str) -> tuple:
    """Sort key for version strings: numeric parts compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (-1, 0, p) for p in re.split(r"[.+\-_]", version))


def system_versions(prefix=None) -> list[Path]:
    """Installed system runtime folders, newest first (whether or not they are sound)."""
    root = system_root(prefix)
    if not root.is_dir():
        return []
    found = [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    return sorted(found, key=lambda d: version_key(d.name), reverse=True)


def read_manifest(folder: Path, kind: str = "path") -> dict | None:
    """folder/manifest.json as a dict; None when there is none."""
    path = Path(folder) / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RuntimeLoadError(f"{kind} runtime at {folder}: unreadable {MANIFEST_NAME}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise RuntimeLoadError(f"{kind} runtime at {folder}: {MANIFEST_NAME} has no file list")
    return data


def check_folder(folder: Path, kind: str = "path", require_manifest: bool = True) -> dict | None:
    """Check a runtime folder without loading it: library present, manifest ABI
    number, sha256 of every listed file.  Returns the manifest (None if there is
    none and none is required); raises RuntimeLoadError naming path and reason."""
    folder = Path(folder)
    lib_path = folder / LIBRARY_NAME
    if not lib_path.is_file():
        raise RuntimeLoadError(f"{kind} runtime at {folder}: no library {lib_path}")
    manifest = read_manifest(folder, kind)
    if manifest is None:
        if require_manifest:
            raise RuntimeLoadError(f"{kind} runtime at {folder}: no {MANIFEST_NAME}")
        return None
    expected = _expected_abi()
    if manifest.get("abi") != expected:
        raise RuntimeLoadError(f"{kind} runtime at {folder} has ABI {manifest.get('abi')} (manifest); "
                               f"this SDK needs ABI {expected}")
    files = manifest["files"]
    if LIBRARY_NAME not in files:
        raise RuntimeLoadError(f"{kind} runtime at {folder}: {MANIFEST_NAME} does not list {LIBRARY_NAME}")
    digests = _cache.DigestCache()  # (a file hashed before and unchanged since is not read again)
    for name, digest in files.items():
        path = (folder / name)
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise RuntimeLoadError(f"{kind} runtime at {folder}: {MANIFEST_NAME} names a file outside it: {name}")
        if not path.is_file():
            raise RuntimeLoadError(f"{kind} runtime at {folder}: missing file {path}")
        if digests.sha256(path) != digest:
            raise RuntimeLoadError(f"{kind} runtime at {folder}: checksum mismatch for {path} "
                                   f"(truncated or changed since {MANIFEST_NAME} was written"
                                   + ("; rebuild with `python native/_build.py`)" if kind == "bundled" else ")"))
    digests.save()
    return manifest


def check_binaries(kind: str, lib_path: Path, names: platforms.PlatformNames = HOST) -> None:
    """The library and the BLAS beside it are whole files of the platform's format (ELF
    on Linux: not truncated either), else RuntimeLoadError naming the file and what it
    is not.  dlopen of a truncated library can die of SIGBUS when it touches pages past
    the end of the file, so this runs before dlopen even when there is no manifest to
    check against."""
    for so in (lib_path, *sorted(lib_path.parent.glob(names.blas_glob))):   # and the BLAS it maps
        problem = names.binary_problem(so)
        if problem:
            raise RuntimeLoadError(f"{kind} runtime at {lib_path} cannot be loaded: {so.name} is {problem}")


def candidates(spec: str | None = None, prefix=None) -> list[tuple[str, Path]]:
    """(kind, library path) to try, in order, for a selection spec."""
    spec = os.environ.get("MLRT_RUNTIME", "bundled") if spec is None else spec
    spec = spec.strip()
    bundled = ("bundled", _BUNDLED_DIR / LIBRARY_NAME)
    if spec in ("", "bundled"):
        return [bundled]
    if spec == "system" or spec.startswith("system:"):
        versions = system_versions(prefix)
        if spec.startswith("system:"):
            want = spec.split(":", 1)[1]
            versions = [d for d in versions if d.name == want]
            if not versions:
                raise RuntimeLoadError(f"system runtime {want}: not installed under {system_root(prefix)} "
                                       f"(`mlrt runtime list --prefix {system_prefix(prefix)}` shows what is)")
        if not versions:
            raise RuntimeLoadError(f"system runtime: none installed under {system_root(prefix)} "
                                   f"(install one with `mlrt runtime install --prefix {system_prefix(prefix)}`, "
                                   "or use MLRT_RUNTIME=bundled)")
        return [("system", versions[0] / LIBRARY_NAME)]
    if spec == "auto":
        return [("system", d / LIBRARY_NAME) for d in system_versions(prefix)] + [bundled]
    path = Path(spec).expanduser()
    return [("path", path / LIBRARY_NAME if path.is_dir() else path)]


def _dlopen_quiet_blas(ffi, lib_path: Path):
    """dlopen with OPENBLAS_NUM_THREADS=1 for the duration: the runtime's own copy of
    OpenBLAS then starts no idle threads of its own (mlrt runs BLAS single-threaded
    inside its pool).  The variable is restored at once, so other libraries are not
    affected.  Where there is no rpath (Windows), the library's folder joins the DLL
    search path for the dlopen, so the BLAS beside it is found."""
    import contextlib

    old = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    beside = os.add_dll_directory(str(lib_path.parent)) if HOST.rpath is None else contextlib.nullcontext()
    try:
        with beside:
            return ffi.dlopen(str(lib_path))
    finally:
        if old is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = old


def _kernel_opsets(ffi, lib) -> dict:
    opsets: dict = {}
    for i in range(lib.mlrt_kernel_count()):
        k = lib.mlrt_kernel_get(i)
        dom = ffi.string(k.domain).decode() or "ai.onnx"
        top = k.since_version if k.until_version >= 2**31 - 1 else k.until_version
        lo, hi = opsets.get(dom, (k.since_version, top))
        opsets[dom] = (min(lo, k.since_version), max(hi, top))
    return {d: {"min": a, "max": b} for d, (a, b) in sorted(opsets.items())}


def load_one(kind: str, lib_path: Path) -> Runtime:
    """Check and load one runtime; RuntimeLoadError (never a crash) if it is unfit."""
    import cffi

    lib_path = Path(lib_path)
    if not lib_path.exists():
        hint = {"bundled": "the package was installed without its native build; reinstall with `pip install .`",
                "system": "reinstall it with `mlrt runtime install`"}.get(kind, "check MLRT_RUNTIME")
        raise RuntimeLoadError(f"{kind} runtime: no library at {lib_path} ({hint})")
    manifest = None
    if lib_path.name == LIBRARY_NAME:   # checks come before dlopen
        manifest = check_folder(lib_path.parent, kind, require_manifest=(kind == "system"))
    check_binaries(kind, lib_path)
    try:
        ffi = _cache.declarations(cdef_text(_header_dir(lib_path)))
        lib = _dlopen_quiet_blas(ffi, lib_path)
    except (OSError, cffi.CDefError, cffi.FFIError) as exc:
        raise RuntimeLoadError(f"{kind} runtime at {lib_path} cannot be loaded: {exc}") from exc
    expected = _expected_abi()
    try:
        abi = lib.mlrt_abi_version()
    except AttributeError as exc:   # not an mlrt library at all
        raise RuntimeLoadError(f"{kind} runtime at {lib_path} cannot be loaded: {exc}") from exc
    if abi != expected:
        raise RuntimeLoadError(f"{kind} runtime at {lib_path} has ABI {abi}; this SDK needs ABI {expected}")
    if manifest is not None:
        version = str(manifest.get("version") or ffi.string(lib.mlrt_version()).decode())
        opsets = manifest.get("opsets") or _kernel_opsets(ffi, lib)
        providers = tuple(manifest.get("providers") or ("CPUExecutionProvider",))
    else:
        version = ffi.string(lib.mlrt_version()).decode()
        opsets = _kernel_opsets(ffi, lib)
        providers = ("CPUExecutionProvider",)
    return Runtime(kind=kind, path=lib_path, version=version, abi=abi, opsets=opsets, providers=providers,
                   manifest=manifest, ffi=ffi, lib=lib)


def load(spec: str | None = None, prefix=None) -> Runtime:
    """Load the runtime named by spec (default: $MLRT_RUNTIME or "bundled").

    Candidates are tried in order ("auto" has several); the first that passes
    every check is returned, else RuntimeLoadError lists why each was refused."""
    tried = candidates(spec, prefix)
    reasons = []
    for kind, lib_path in tried:
        try:
            return load_one(kind, lib_path)
        except RuntimeLoadError as exc:
            reasons.append(str(exc))
    if len(reasons) == 1:
        raise RuntimeLoadError(reasons[0])
    raise RuntimeLoadError("no usable runtime; tried:\n  " + "\n  ".join(reasons))


_current: Runtime | None = None
_lock = threading.Lock()


def current_runtime() -> Runtime:
    """The runtime this process uses, loaded on first call (from $MLRT_RUNTIME and
    $MLRT_SYSTEM_PREFIX unless select_runtime chose one before)."""
    global _current
    with _lock:
        if _current is None:
            _current = load()
        return _current


def select_runtime(spec: str = "auto", prefix=None) -> Runtime:
    """Choose and load this process's runtime: "bundled", "system",
    "system:<version>", "auto" or a path; prefix overrides $MLRT_SYSTEM_PREFIX.

    Must come before first use: once a runtime is loaded, selecting a different one
    raises RuntimeLoadError (a process keeps one runtime); selecting the one already
    loaded returns it."""
    global _current
    with _lock:
        if _current is not None:
            wanted = [Path(p).resolve() for _, p in candidates(spec, prefix)]
            if spec != "auto":
                wanted = wanted[:1]
            if _current.path.resolve() in wanted:
                return _current
            raise RuntimeLoadError(f"{_current.describe()} is already in use; select_runtime({spec!r}) "
                                   "must come before the first model is loaded (or run a new process)")
        _current = load(spec, prefix)
        return _current
