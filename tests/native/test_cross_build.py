"""The C core for the platforms this machine can only emulate.

aarch64: every file of native/src and native/kernels compiles with the build's own flags
(native/_build.py) and -Werror under aarch64-linux-gnu-gcc; linked against the aarch64
OpenBLAS (the scipy-openblas32 wheel for manylinux aarch64), the C kernel test
tests/native/c/kernel_paths.c runs under qemu-user on the NEON path -- on a CPU model
without the dot-product extension and on one with it -- and on the portable path, its
features read from the kernel's hardware capabilities.

Windows x86-64: the same files compile under mingw-w64 with -Werror against the Windows
OpenBLAS (the win_amd64 wheel), link into mlrt_core.dll, and the C kernel test runs
under wine on each x86 path this CPU has.

It holds the core to one portable source: x86-only code sits under MLRT_X86
(src/internal.h) with the portable C path always compiled, NEON code in its own files
(src/sgemm_neon.c, src/qgemm_neon.c, kernels/conv_depthwise_neon.c), aligned memory
through mlrt_aligned_alloc, and kernels register through constructors, not an ELF linker section.  Each step skips, saying why, where its
tool is missing: the cross compilers, qemu-aarch64 with an aarch64 C library, wine
(Debian/Ubuntu: gcc-aarch64-linux-gnu, qemu-user, gcc-mingw-w64-x86-64, wine64), or the
other platforms' OpenBLAS (MLRT_AARCH64_OPENBLAS, MLRT_WIN64_OPENBLAS: an unpacked
wheel's scipy_openblas32 folder; .ci/run downloads both)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import mlrt
from mlrt.distribution.platforms import platform_names
from mlrt.native import _build

CROSS_CC = "aarch64-linux-gnu-gcc"
EM_AARCH64 = 183  # the ELF header's e_machine for AArch64
SYSROOT = Path("/usr/aarch64-linux-gnu")  # the cross toolchain's C library, for qemu's loader
TESTS = Path(__file__).resolve().parent
NATIVE = Path(_build.__file__).resolve().parent


def _compile_core(cc: str, out: Path, blas_include: Path | None = None):
    """Every core and kernel file compiled by `cc` with the native build's flags (no
    sanitizers) and -Werror: the plan, and (source, object, compiler run) per file."""
    plan = _build._Plan(mlrt.__version__, cc, "", None)
    assert not [f for f in plan.flags if f.startswith("-m")], "a CPU-specific flag in the build's flags"
    flags = [*plan.flags, "-Werror"]
    if blas_include is not None:  # the target's own OpenBLAS headers
        flags = [f"-I{blas_include}" if f == f"-I{plan.blas_inc}" else f for f in flags]

    def compile_one(src: Path) -> tuple[Path, Path, subprocess.CompletedProcess]:
        obj = out / f"{src.parent.name}.{src.stem}.o"
        run = subprocess.run([*plan.cmd, *flags, "-c", str(src), "-o", str(obj)], capture_output=True, text=True)
        return src, obj, run

    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return plan, list(pool.map(compile_one, plan.sources))


def _compiler_output(results) -> list[str]:
    return [f"{src.parent.name}/{src.name}:\n{run.stdout}{run.stderr}"
            for src, _, run in results if run.returncode != 0 or run.stdout or run.stderr]


@pytest.fixture(scope="module")
def aarch64_objects(tmp_path_factory):
    """The core's objects compiled for aarch64, and each compiler's output."""
    if shutil.which(CROSS_CC) is None:
        pytest.skip(f"{CROSS_CC} is not installed (Debian/Ubuntu: apt-get install gcc-aarch64-linux-gnu)")
    out = tmp_path_factory.mktemp("aarch64")
    plan, results = _compile_core(CROSS_CC, out)
    return plan, out, results


def test_core_compiles_for_aarch64_without_warnings(aarch64_objects):
    _, _, results = aarch64_objects
    failed = _compiler_output(results)
    assert not failed, "\n".join(failed)
    assert len(results) == len(_build.sources())
    for _, obj, _ in results:
        header = obj.read_bytes()[:20]
        assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == EM_AARCH64, obj.name


# The loops each architecture-neutral kernel file leaves to the compiler, which must come
# out as NEON vector code on aarch64 (pooling, softmax, the norms' lines: no hand-written
# NEON of their own, except GlobalMaxPool's select loop, which gcc leaves scalar there):
# (object, function, a vector instruction the function must hold).  A function inlined away
# by another compiler fails here by name, to be looked at, rather than silently going scalar.
NEON_LOOPS = [
    ("kernels.softmax.o", fn, r"\bv\d+\.4s") for fn in
    ("max_row_f32", "exp_row_f32", "sum_row_f32", "scale_row_f32", "log_row_f32", "max_lanes_f32",
     "exp_sum_lanes_f32", "sum_exp_lanes_f32", "mul_lanes_f32")
] + [
    ("kernels.normalize.o", fn, r"\bv\d+\.4s") for fn in
    ("line_sum", "line_dev2", "line_affine", "line_scaled", "line_uniform", "skip_row_f32")
] + [
    ("kernels.pool.o", "pool_planes", r"\bf(max|add|mul)\s+v\d+\.4s"),  # the pooling planes' sweeps
    ("kernels.pool.o", "global_planes", r"\bfcmgt\s+v\d+\.4s"),          # GlobalMaxPool (hand NEON, inlined)
    ("kernels.pool.o", "sum_f32", r"\bfadd\s+v\d+\.2d"),                 # GlobalAveragePool
]


def test_hot_loops_are_neon_vector_code(aarch64_objects):
    plan, out, results = aarch64_objects
    if _compiler_output(results):
        pytest.fail("the core does not compile for aarch64 (test_core_compiles_for_aarch64_without_warnings)")
    objdump = shutil.which("aarch64-linux-gnu-objdump")
    if objdump is None:
        pytest.skip("aarch64-linux-gnu-objdump is not installed (Debian/Ubuntu: apt-get install binutils-aarch64-linux-gnu)")
    bodies: dict[str, dict[str, str]] = {}
    scalar = []
    for obj, fn, pattern in NEON_LOOPS:
        if obj not in bodies:
            text = subprocess.run([objdump, "-d", str(out / obj)], capture_output=True, text=True, check=True).stdout
            bodies[obj] = {m.group(1): m.group(2) for m in
                           re.finditer(r"^[0-9a-f]+ <([\w.]+)>:\n(.*?)(?=\n\n|\Z)", text, re.S | re.M)}
        body = bodies[obj].get(fn)
        if body is None or not re.search(pattern, body):
            scalar.append(f"{obj} {fn}: " + ("not a function of its own" if body is None else f"no {pattern}"))
    assert not scalar, "\n".join(scalar)


def test_core_compiles_with_clang_without_warnings(tmp_path):
    """The same core with clang (the compiler of macOS and of many Linux distributions):
    every file, the build's flags, -Werror, for x86-64.  (For aarch64 a clang from 16 on is
    needed: before it the dot-product intrinsics exist only under a whole-file -march, not
    in a function's own target, which the SDOT kernel uses; Debian 12's clang is 14.)"""
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed (Debian/Ubuntu: apt-get install clang)")
    plan, results = _compile_core("clang --target=x86_64-linux-gnu", tmp_path)
    failed = _compiler_output(results)
    assert not failed, "\n".join(failed)
    assert len(results) == len(_build.sources())


def _aarch64_openblas() -> Path:
    where = os.environ.get("MLRT_AARCH64_OPENBLAS")
    if not where:
        pytest.skip("MLRT_AARCH64_OPENBLAS is not set (the unpacked scipy-openblas32 manylinux aarch64 wheel's "
                    "scipy_openblas32 folder; .ci/run downloads it)")
    lib = Path(where) / "lib" / "libscipy_openblas.so"
    if not lib.is_file():
        pytest.skip(f"no aarch64 OpenBLAS at {lib}")
    return lib.parent


# (qemu CPU model, MLRT_ISA, the path that must run, features the model must report).
# Not qemu's "max": with its SVE, OpenBLAS 0.3.34's kernels (the portable path's products)
# gave a transposed-B Gemm a different wrong element each run, right with sve=off and on
# every model without SVE -- whether qemu's emulation or OpenBLAS is at fault is open.
RUNS = [("cortex-a72", "", "neon", "neon"), ("neoverse-n1", "", "neon", "neon dotprod fp16"),
        ("neoverse-n1", "portable", "portable", "neon dotprod fp16")]


@pytest.mark.parametrize("cpu, isa, path, features", RUNS)
def test_kernel_paths_run_under_qemu(aarch64_objects, tmp_path, cpu, isa, path, features):
    plan, out, results = aarch64_objects
    if any(run.returncode for _, _, run in results):
        pytest.fail("the core does not compile for aarch64 (test_core_compiles_for_aarch64_without_warnings)")
    if shutil.which("qemu-aarch64") is None or not (SYSROOT / "lib").is_dir():
        pytest.skip("qemu-aarch64 or the aarch64 C library is not installed "
                    "(Debian/Ubuntu: apt-get install qemu-user gcc-aarch64-linux-gnu)")
    blas = _aarch64_openblas()
    library = out / "libmlrt_core.so"
    if not library.exists():  # linked once for the module's runs, as native/_build.py links
        subprocess.run([*plan.cmd, "-shared", "-pthread", "-o", str(library), *(str(o) for _, o, _ in results),
                        f"-L{blas}", f"-l{plan.blas_name}", "-lm"], check=True)
    program = out / "kernel_paths"
    if not program.exists():
        subprocess.run([*plan.cmd, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
                        f"-I{NATIVE / 'include'}", f"-I{NATIVE / 'kernels'}", str(TESTS / "c" / "kernel_paths.c"),
                        f"-L{out}", "-lmlrt_core", f"-Wl,-rpath-link,{blas}", "-lm", "-o", str(program)], check=True)
    env = dict(os.environ, QEMU_CPU=cpu, QEMU_LD_PREFIX=str(SYSROOT), LD_LIBRARY_PATH=f"{out}:{blas}",
               MLRT_ISA=isa)
    run = subprocess.run(["qemu-aarch64", str(program)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"isa {path}" and lines[1] == f"features {features}", lines[:2]
    assert lines[-1].startswith("ok ") and int(lines[-1].split()[1]) >= 20, run.stdout


# -- Windows x86-64: the DLL cross-built by mingw-w64, the C kernel test run under wine ----------

MINGW_CC = "x86_64-w64-mingw32-gcc"


def _win64_openblas() -> Path:
    where = os.environ.get("MLRT_WIN64_OPENBLAS")
    if not where:
        pytest.skip("MLRT_WIN64_OPENBLAS is not set (the unpacked scipy-openblas32 win_amd64 wheel's "
                    "scipy_openblas32 folder; .ci/run downloads it)")
    folder = Path(where)
    if not (folder / "lib" / "libscipy_openblas.dll").is_file() or not (folder / "include" / "cblas.h").is_file():
        pytest.skip(f"no Windows OpenBLAS (lib/libscipy_openblas.dll, include/cblas.h) under {folder}")
    return folder


@pytest.fixture(scope="module")
def windows_build(tmp_path_factory):
    """The core compiled by mingw-w64 against the Windows OpenBLAS, linked into
    mlrt_core.dll by the build's own Windows link command (libgcc and winpthreads inside
    it: it needs only OpenBLAS and the system's DLLs), and the C kernel test linked
    against it, all in one folder."""
    if shutil.which(MINGW_CC) is None:
        pytest.skip(f"{MINGW_CC} is not installed (Debian/Ubuntu: apt-get install gcc-mingw-w64-x86-64)")
    blas = _win64_openblas()
    out = tmp_path_factory.mktemp("win64")
    plan, results = _compile_core(MINGW_CC, out, blas / "include")
    failed = _compiler_output(results)
    if not failed:
        dll = out / "mlrt_core.dll"
        subprocess.run(_build.link_command(plan.cmd, platform_names("win32"), dll, [o for _, o, _ in results],
                                           blas / "lib", "scipy_openblas"), check=True)
        subprocess.run([*plan.cmd, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", f"-I{NATIVE / 'include'}",
                        f"-I{NATIVE / 'kernels'}", str(TESTS / "c" / "kernel_paths.c"), f"-L{out}", "-lmlrt_core",
                        "-lm", "-o", str(out / "kernel_paths.exe")], check=True)
        shutil.copy2(blas / "lib" / "libscipy_openblas.dll", out)
    return out, failed


def test_core_builds_a_windows_dll_without_warnings(windows_build):
    out, failed = windows_build
    assert not failed, "\n".join(failed)
    data = (out / "mlrt_core.dll").read_bytes()
    pe = int.from_bytes(data[0x3C:0x40], "little")
    assert data[:2] == b"MZ" and data[pe:pe + 4] == b"PE\0\0"
    assert int.from_bytes(data[pe + 4:pe + 6], "little") == 0x8664  # IMAGE_FILE_MACHINE_AMD64
    # the DLLs it imports: OpenBLAS beside it and Windows' own, no MinGW runtime DLL
    objdump = shutil.which("x86_64-w64-mingw32-objdump")
    if objdump:
        imports = re.findall(r"DLL Name: (\S+)", subprocess.run([objdump, "-p", str(out / "mlrt_core.dll")],
                                                                capture_output=True, text=True, check=True).stdout)
        assert "libscipy_openblas.dll" in imports, imports
        mingw = [d for d in imports if re.match(r"(?i)lib(gcc|winpthread|stdc)", d)]
        assert not mingw, f"mlrt_core.dll needs MinGW's {mingw}"


def _host_paths() -> list[str]:
    from mlrt import native
    features = native.runtime().ffi.string(native.runtime().lib.mlrt_cpu_features()).decode().split()
    return ["portable"] + [isa for isa, need in (("avx2", "avx2"), ("avx512", "avx512f")) if need in features]


@pytest.mark.parametrize("isa", ["portable", "avx2", "avx512"])
def test_kernel_paths_run_under_wine(windows_build, isa):
    out, failed = windows_build
    if failed:
        pytest.fail("the core does not build for Windows (test_core_builds_a_windows_dll_without_warnings)")
    wine = shutil.which("wine") or shutil.which("wine64")
    if wine is None:
        pytest.skip("wine is not installed (Debian/Ubuntu: apt-get install wine64)")
    if isa not in _host_paths():
        pytest.skip(f"this CPU does not run the {isa} kernels")
    env = dict(os.environ, WINEPREFIX=str(out / "wineprefix"), WINEDEBUG="-all", MLRT_ISA=isa,
               WINEDLLOVERRIDES="mscoree,mshtml=")  # (one prefix for the runs; no .NET or HTML installers)
    run = subprocess.run([wine, str(out / "kernel_paths.exe")], env=env, capture_output=True, text=True, timeout=600,
                         cwd=out)
    stdout = run.stdout.replace("\r\n", "\n")
    assert run.returncode == 0, stdout + run.stderr[-3000:]
    lines = stdout.splitlines()
    assert lines[0] == f"isa {isa}", lines[0]
    assert lines[-1].startswith("ok ") and int(lines[-1].split()[1]) >= 20, stdout
