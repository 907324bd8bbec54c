"""Build libmlrt_core.so from native/src and native/kernels.

Used by the package build (setup.py) and by hand while developing:

    python native/_build.py [--out DIR]

The library links OpenBLAS from the scipy-openblas32 wheel; the BLAS library is
copied beside libmlrt_core.so and found through an $ORIGIN rpath, so the runtime
folder is self-contained.  Objects are cached by source hash and flags under
DIR/.obj, so a rebuild after editing one kernel compiles one file.  Flags are
portable (no -march=native); faster per-ISA code is chosen at run time.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBRARY = "libmlrt_core.so"
CFLAGS = ["-std=c11", "-O3", "-fPIC", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-format-truncation",
          "-Werror=implicit-function-declaration", "-fno-math-errno", "-pthread"]


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


def build(out_dir: Path, version: str = "0.0.0", cc: str | None = None, jobs: int = 2) -> Path:
    """Compile and link the runtime into out_dir; return the library path.

    Builds into one folder are serialised with a lock file, so two builds started
    together never leave a library missing the newer of their sources."""
    import fcntl

    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_locked(out_dir, version, cc or os.environ.get("CC") or "cc", jobs)


def _build_locked(out_dir: Path, version: str, cc: str, jobs: int) -> Path:
    obj_dir = out_dir / ".obj"
    obj_dir.mkdir(exist_ok=True)
    blas_inc, blas_lib_dir, blas_name = _blas()
    flags = CFLAGS + [f"-I{HERE / 'include'}", f"-I{HERE / 'src'}", f"-I{blas_inc}",
                      f'-DMLRT_VERSION_STRING="{version}"',
                      f'-DMLRT_BUILD_FLAGS="{" ".join(CFLAGS)}"']
    header_hash = hashlib.sha256(b"".join(h.read_bytes() for h in headers())).hexdigest()
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        objs = list(pool.map(lambda s: _compile(cc, s, obj_dir, flags, header_hash), sources()))
    blas_file = f"lib{blas_name}.so"
    tmp_blas = out_dir / f".{blas_file}.{os.getpid()}.tmp"
    shutil.copy2(blas_lib_dir / blas_file, tmp_blas)
    os.replace(tmp_blas, out_dir / blas_file)
    target = out_dir / LIBRARY
    tmp = out_dir / f".{LIBRARY}.{os.getpid()}.tmp"
    subprocess.run([cc, "-shared", "-pthread", "-o", str(tmp), *map(str, objs),
                    f"-L{out_dir}", f"-l{blas_name}", "-Wl,-rpath,$ORIGIN", "-lm"], check=True)
    os.replace(tmp, target)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE, help="folder for the library (default: native/)")
    ap.add_argument("--version", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)
    version = args.version or _project_version()
    print(build(args.out, version=version, jobs=args.jobs))
    return 0


def _project_version() -> str:
    import tomllib
    with open(HERE.parent / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


if __name__ == "__main__":
    sys.exit(main())
