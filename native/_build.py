"""Build libmlrt_core.so from native/src and native/kernels.

Used by the package build (setup.py) and by hand while developing:

    python native/_build.py [--out DIR]

The library links OpenBLAS from the scipy-openblas32 wheel; the BLAS library is
copied beside libmlrt_core.so and found through an $ORIGIN rpath, so the runtime
folder is self-contained.  Objects are cached by source hash and flags under
DIR/.obj, so a rebuild after editing one kernel compiles one file.  Flags are
portable (no -march=native); faster per-ISA code is chosen at run time.

Sanitizers: `MLRT_SANITIZE=address,undefined` (or `--sanitize address,undefined`)
builds with those -fsanitize checks, -O1 -g and no recovery from undefined behaviour
(the first report ends the process).  A Python process loads such a library only with
the sanitizer runtimes preloaded first (`sanitizer_preload`); tests/native/
test_sanitizers.py builds one into a runtime folder and runs the kernel tests and a
fuzzing slice on it.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBRARY = "libmlrt_core.so"
CFLAGS = ["-std=c11", "-O3", "-fPIC", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-format-truncation",
          "-Werror=implicit-function-declaration", "-fno-math-errno", "-pthread"]


SANITIZERS = ("address", "undefined")


def sanitize_flags(spec: str | None) -> list[str]:
    """Compile and link flags for MLRT_SANITIZE's comma-separated sanitizers ([] if none)."""
    names = [n.strip() for n in (spec or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in SANITIZERS]
    if unknown:
        raise SystemExit(f"MLRT_SANITIZE: unknown sanitizer(s) {', '.join(unknown)}; choose from {', '.join(SANITIZERS)}")
    if not names:
        return []
    flags = [f"-fsanitize={','.join(names)}", "-fno-omit-frame-pointer", "-g", "-O1"]
    if "undefined" in names:
        flags.append("-fno-sanitize-recover=undefined")
    return flags


def sanitizer_preload(spec: str, cc: str | None = None) -> list[str]:
    """The sanitizer runtime libraries a process must preload (LD_PRELOAD) to load a
    library built with `spec`; [] when the compiler has none of them installed."""
    cc = cc or os.environ.get("CC") or "cc"
    wanted = {"address": "libasan.so", "undefined": "libubsan.so"}
    found = []
    for name in [n.strip() for n in spec.split(",") if n.strip()]:
        path = subprocess.run([cc, f"-print-file-name={wanted[name]}"], capture_output=True, text=True).stdout.strip()
        if not os.path.isabs(path) or not os.path.exists(path):
            return []
        found.append(path)
    return found


def sanitizer_env(spec: str, cc: str | None = None) -> dict[str, str]:
    """Environment for a Python process that loads a library built with `spec`: its
    sanitizer runtimes preloaded, leak checking off (the interpreter keeps objects to
    its exit by design), reports with stacks.  {} if the runtimes are not installed."""
    preload = sanitizer_preload(spec, cc)
    if not preload:
        return {}
    return {"LD_PRELOAD": " ".join(preload + [os.environ.get("LD_PRELOAD", "")]).strip(),
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=86",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87"}


def built_sanitizers(lib_path: Path) -> str:
    """The sanitizers a built library calls into ("address,undefined", or "")."""
    data = Path(lib_path).read_bytes()
    return ",".join(n for n, mark in (("address", b"__asan_init"), ("undefined", b"__ubsan_handle_")) if mark in data)


def sources() -> list[Path]:
    return sorted((HERE / "src").glob("*.c")) + sorted((HERE / "kernels").glob("*.c"))


def headers() -> list[Path]:
    return sorted((HERE / "include").glob("*.h")) + sorted((HERE / "src").glob("*.h")) + sorted((HERE / "kernels").glob("*.h"))


def _blas():
    import scipy_openblas32 as sob
    return Path(sob.get_include_dir()), Path(sob.get_lib_dir()), sob.get_library()


def _compile(cc: str, src: Path, obj_dir: Path, flags: list[str], header_hash: str) -> Path:
    digest = hashlib.sha256(src.read_bytes() + " ".join(flags).encode() + header_hash.encode()).hexdigest()[:16]
    obj = obj_dir / f"{src.stem}-{digest}.o"
    if not obj.exists():
        tmp = obj.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([cc, *flags, "-c", str(src), "-o", str(tmp)], check=True)
        os.replace(tmp, obj)
    return obj


def build(out_dir: Path, version: str = "0.0.0", cc: str | None = None, jobs: int = 2,
          sanitize: str | None = None) -> Path:
    """Compile and link the runtime into out_dir; return the library path.  `sanitize`
    (default $MLRT_SANITIZE): sanitizers to build with, e.g. "address,undefined".

    Builds into one folder are serialised with a lock file, so two builds started
    together never leave a library missing the newer of their sources."""
    import fcntl

    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        extra = sanitize_flags(os.environ.get("MLRT_SANITIZE") if sanitize is None else sanitize)
        return _build_locked(out_dir, version, cc or os.environ.get("CC") or "cc", jobs, extra)


def _build_locked(out_dir: Path, version: str, cc: str, jobs: int, extra: list[str]) -> Path:
    obj_dir = out_dir / ".obj"
    obj_dir.mkdir(exist_ok=True)
    blas_inc, blas_lib_dir, blas_name = _blas()
    flags = CFLAGS + extra + [f"-I{HERE / 'include'}", f"-I{HERE / 'src'}", f"-I{blas_inc}",
                              f'-DMLRT_VERSION_STRING="{version}"',
                              f'-DMLRT_BUILD_FLAGS="{" ".join(CFLAGS + extra)}"']
    header_hash = hashlib.sha256(b"".join(h.read_bytes() for h in headers())).hexdigest()
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        objs = list(pool.map(lambda s: _compile(cc, s, obj_dir, flags, header_hash), sources()))
    blas_file = f"lib{blas_name}.so"
    tmp_blas = out_dir / f".{blas_file}.{os.getpid()}.tmp"
    shutil.copy2(blas_lib_dir / blas_file, tmp_blas)
    os.replace(tmp_blas, out_dir / blas_file)
    target = out_dir / LIBRARY
    tmp = out_dir / f".{LIBRARY}.{os.getpid()}.tmp"
    subprocess.run([cc, "-shared", "-pthread", *extra, "-o", str(tmp), *map(str, objs),
                    f"-L{out_dir}", f"-l{blas_name}", "-Wl,-rpath,$ORIGIN", "-lm"], check=True)
    os.replace(tmp, target)
    write_manifest(out_dir, version)
    return target


# --- the runtime folder's manifest -------------------------------------------------
# A runtime folder holds libmlrt_core.so, the BLAS beside it, include/mlrt.h, the
# kernels' parameter headers (kernels/*.h, read by cffi), the files providers ship
# (their RUNTIME_FILES: the OpenCL provider's kernel sources) and manifest.json, which
# names the version, ABI number, opset range per domain, providers, build flags and
# the sha256 of every other file.  mlrt.distribution checks it before dlopen.

MANIFEST = "manifest.json"


def runtime_files(folder: Path) -> list[str]:
    """The files of a runtime folder (relative, '/'-separated), manifest excluded."""
    names = sorted(p.name for p in folder.glob("lib*.so"))
    names += ["include/" + p.name for p in sorted((folder / "include").glob("*.h"))]
    names += ["kernels/" + p.name for p in sorted((folder / "kernels").glob("*.h"))]
    for _, patterns in provider_declarations(folder):
        names += [p.relative_to(folder).as_posix() for pattern in patterns for p in sorted(folder.glob(pattern))]
    return names


def provider_declarations(folder: Path) -> list[tuple[str, tuple]]:
    """(name, RUNTIME_FILES) of every provider module in folder/providers, read from its
    source with ast (building imports nothing of mlrt): a provider class's `name` and
    the globs of the files it ships in a runtime folder besides the library."""
    found = []
    for path in sorted((folder / "providers").glob("[!_]*.py")):
        names, files = [], ()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["RUNTIME_FILES"]:
                files = tuple(ast.literal_eval(node.value))
            if isinstance(node, ast.ClassDef):
                names += [ast.literal_eval(a.value) for a in node.body if isinstance(a, ast.Assign)
                          and [getattr(t, "id", None) for t in a.targets] == ["name"]]
        found += [(name, files) for name in names]
    return found


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _library_facts(lib_path: Path) -> dict:
    """ABI number, build info and the opset range per domain, read from the built
    library through ctypes (in a child process, so the build never keeps it mapped)."""
    code = r"""
import ctypes, json, sys
class K(ctypes.Structure):
    _fields_ = [("op_type", ctypes.c_char_p), ("domain", ctypes.c_char_p), ("since", ctypes.c_int32),
                ("until", ctypes.c_int32), ("mask", ctypes.c_uint64), ("run", ctypes.c_void_p)]
L = ctypes.CDLL(sys.argv[1])
L.mlrt_kernel_get.restype = ctypes.POINTER(K)
L.mlrt_build_info.restype = L.mlrt_version.restype = ctypes.c_char_p
opsets = {}
for i in range(L.mlrt_kernel_count()):
    k = L.mlrt_kernel_get(i).contents
    dom = k.domain.decode() or "ai.onnx"
    lo, hi = opsets.get(dom, (k.since, k.since))
    top = k.since if k.until >= 2**31 - 1 else k.until
    opsets[dom] = (min(lo, k.since), max(hi, top))
print(json.dumps({"abi": L.mlrt_abi_version(), "build": L.mlrt_build_info().decode(),
                  "library_version": L.mlrt_version().decode(),
                  "opsets": {d: {"min": a, "max": b} for d, (a, b) in sorted(opsets.items())}}))
"""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    built_with = built_sanitizers(lib_path)
    if built_with:  # (its sanitizer runtimes must be loaded before it)
        env.update(sanitizer_env(built_with))
    out = subprocess.run([sys.executable, "-c", code, str(lib_path)], check=True, capture_output=True,
                         text=True, env=env).stdout
    return json.loads(out)


def manifest_for(folder: Path, version: str, facts: dict | None = None) -> dict:
    facts = facts or _library_facts(folder / LIBRARY)
    return {
        "name": "mlrt",
        "version": version,
        "abi": facts["abi"],
        # per domain: the lowest opset any kernel starts at, and the highest opset
        # any kernel is (re)defined at -- newer opsets of an operator may need a
        # newer runtime
        "opsets": facts["opsets"],
        # the providers whose shipped files are all present
        "providers": [name for name, patterns in provider_declarations(folder)
                      if all(any(folder.glob(pattern)) for pattern in patterns)],
        "build": facts["build"],
        "files": {name: sha256_file(folder / name) for name in runtime_files(folder)},
    }


def write_manifest(folder: Path, version: str, facts: dict | None = None) -> Path:
    """Write folder/manifest.json (atomically) for the runtime in folder."""
    data = manifest_for(folder, version, facts)
    target = folder / MANIFEST
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, target)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE, help="folder for the library (default: native/)")
    ap.add_argument("--version", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--sanitize", default=None, help="e.g. address,undefined (default: $MLRT_SANITIZE)")
    args = ap.parse_args(argv)
    version = args.version or _project_version()
    print(build(args.out, version=version, jobs=args.jobs, sanitize=args.sanitize))
    print(args.out / MANIFEST)
    return 0


def _project_version() -> str:
    import tomllib
    with open(HERE.parent / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


if __name__ == "__main__":
    sys.exit(main())
