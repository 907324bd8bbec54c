"""The float32 kernels from C alone, on every instruction-set path this CPU runs:
tests/native/c/kernel_paths.c (products, Conv's paths, FusedConv's activations, pooling,
Softmax against float64 references) compiled against the runtime library in use and
run once per path, MLRT_ISA choosing it -- portable always, AVX2 and AVX-512 where the
CPU has them (tests/native/test_cross_build.py runs the same program for aarch64 under
qemu, NEON and portable).  Also: `python -m mlrt` names the path that runs, and an
MLRT_ISA the CPU cannot run falls to the widest it can.  Skipped, saying why, without a
C compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlrt import native
from mlrt.native import _build

HERE = Path(__file__).resolve().parent
NATIVE = Path(_build.__file__).resolve().parent


def _isa_line(env: dict) -> str:
    out = subprocess.run([sys.executable, "-m", "mlrt"], env=env, capture_output=True, text=True, check=True).stdout
    return next(line for line in out.splitlines() if line.startswith("CPU kernel paths:"))


def _paths() -> list[str]:
    features = native.runtime().ffi.string(native.runtime().lib.mlrt_cpu_features()).decode().split()
    return ["portable"] + [isa for isa, need in (("avx2", "avx2"), ("avx512", "avx512f"), ("neon", "neon"))
                           if need in features]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler ({cc}) to build tests/native/c/kernel_paths.c")
    library = Path(native.runtime().path)
    exe = tmp_path_factory.mktemp("kernel_paths") / "kernel_paths"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{NATIVE / 'include'}",
                    f"-I{NATIVE / 'kernels'}", str(HERE / "c" / "kernel_paths.c"), str(library),
                    f"-Wl,-rpath,{library.parent}", "-lm", "-o", str(exe)], check=True)
    return exe


@pytest.mark.parametrize("isa", ["portable", "avx2", "avx512", "neon"])
def test_kernels_on_each_path(program, isa):
    if isa not in _paths():
        pytest.skip(f"this CPU does not run the {isa} kernels (features: {' '.join(_paths()[1:]) or 'none'})")
    run = subprocess.run([str(program)], env=dict(os.environ, MLRT_ISA=isa), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"isa {isa}", lines[0]
    assert lines[-1].startswith("ok ") and int(lines[-1].split()[1]) >= 20, run.stdout


def test_info_names_the_path_and_refuses_what_the_cpu_lacks():
    widest = _paths()[-1]
    assert _isa_line(dict(os.environ, MLRT_ISA="")).startswith(f"CPU kernel paths: {widest} ")
    assert _isa_line(dict(os.environ, MLRT_ISA="portable")).startswith("CPU kernel paths: portable ")
    other = "neon" if widest != "neon" else "avx512"
    line = _isa_line(dict(os.environ, MLRT_ISA=other))
    assert line.startswith(f"CPU kernel paths: {widest} ") and f"MLRT_ISA={other} does not run here" in line
