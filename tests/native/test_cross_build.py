"""The C core compiles for aarch64: every file of native/src and native/kernels, with the
build's own flags (native/_build.py) and -Werror, by aarch64-linux-gnu-gcc.  Compile only:
there is no aarch64 C library or OpenBLAS here to link against.  It holds the core to one
portable source: x86-only code (intrinsics, target attributes, CPU feature checks) sits
under MLRT_X86 (src/internal.h) with the portable C path always compiled, and kernels
register through constructors, not an ELF linker section.  Skipped, saying why, where
the cross compiler is not installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import mlrt
from mlrt.native import _build

CROSS_CC = "aarch64-linux-gnu-gcc"
EM_AARCH64 = 183  # the ELF header's e_machine for AArch64


def test_core_compiles_for_aarch64_without_warnings(tmp_path):
    if shutil.which(CROSS_CC) is None:
        pytest.skip(f"{CROSS_CC} is not installed (Debian/Ubuntu: apt-get install gcc-aarch64-linux-gnu)")
    plan = _build._Plan(mlrt.__version__, CROSS_CC, "", None)  # the native build's flags, no sanitizers
    assert not [f for f in plan.flags if f.startswith("-m")], "a CPU-specific flag in the build's flags"
    flags = [*plan.flags, "-Werror"]

    def compile_one(src: Path) -> tuple[Path, Path, subprocess.CompletedProcess]:
        obj = tmp_path / f"{src.parent.name}.{src.stem}.o"
        run = subprocess.run([*plan.cmd, *flags, "-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        return src, obj, run

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(compile_one, plan.sources))
    failed = [f"{src.parent.name}/{src.name}:\n{run.stdout}{run.stderr}"
              for src, _, run in results if run.returncode != 0 or run.stdout or run.stderr]
    assert not failed, "\n".join(failed)
    assert len(results) == len(_build.sources())
    for _, obj, _ in results:
        header = obj.read_bytes()[:20]
        assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == EM_AARCH64, obj.name
