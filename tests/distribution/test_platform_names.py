"""distribution/platforms.py: the runtime's file names, rpath token and binary format
per platform, asked by the loader and the build; and the build's file lock without
fcntl.  Every platform is checked on every platform: nothing here loads a library."""

import struct
import sys
import types
from pathlib import Path

import pytest

from mlrt import RuntimeLoadError
from mlrt.distribution import LIBRARY_NAME, _runtime, platforms
from mlrt.native import _build

# a 64-bit little-endian ELF header with no program or section headers
ELF = b"\x7fELF\x02\x01\x01" + bytes(57)
MACHO = struct.pack("<I", 0xFEEDFACF) + bytes(60)                  # a 64-bit Mach-O (x86-64, arm64)
PE = b"MZ" + bytes(58) + struct.pack("<I", 64) + b"PE\0\0" + bytes(16)  # e_lfanew (at 0x3c) -> "PE\0\0"
HEADERS = {"ELF": ELF, "Mach-O": MACHO, "PE": PE}

EXPECTED = {  # platform string -> (library, BLAS glob, BLAS file for -lscipy_openblas, rpath token, format)
    "linux": ("libmlrt_core.so", "libscipy_openblas*.so", "libscipy_openblas.so", "$ORIGIN", "ELF"),
    "darwin": ("libmlrt_core.dylib", "libscipy_openblas*.dylib", "libscipy_openblas.dylib", "@loader_path", "Mach-O"),
    "win32": ("mlrt_core.dll", "libscipy_openblas*.dll", "libscipy_openblas.dll", None, "PE"),
}


@pytest.mark.parametrize("system", sorted(EXPECTED))
def test_names_per_platform(system):
    names = platforms.platform_names(system)
    assert (names.library, names.blas_glob, names.blas_file("scipy_openblas"), names.rpath,
            names.format) == EXPECTED[system]


@pytest.mark.parametrize("system, same", [("Linux", "linux"), ("Darwin", "darwin"), ("Windows", "win32"),
                                          ("windows", "win32")])
def test_platform_system_spellings(system, same):
    assert platforms.platform_names(system) == platforms.platform_names(same)


@pytest.mark.parametrize("system", ["sunos5", "cygwin", "", "emscripten"])
def test_unknown_platform_refused(system):
    with pytest.raises(platforms.UnsupportedPlatform, match=rf"no native runtime for platform '{system}' "
                                                            r"\(supported: linux, darwin, win32\)"):
        platforms.platform_names(system)


def test_this_host_is_linux_as_before():
    """The names on Linux are the ones a runtime folder has always had."""
    if sys.platform != "linux":
        pytest.skip("Linux only")
    assert LIBRARY_NAME == _build.LIBRARY == "libmlrt_core.so"
    assert _runtime.HOST == platforms.platform_names("linux")
    assert _build.NAMES.rpath == "$ORIGIN" and _build.NAMES.suffix == ".so"


@pytest.mark.parametrize("system", sorted(EXPECTED))
@pytest.mark.parametrize("header", sorted(HEADERS))
def test_format_check_accepts_its_own_and_refuses_another(tmp_path, system, header):
    names = platforms.platform_names(system)
    lib = tmp_path / names.library
    lib.write_bytes(HEADERS[header])
    if header == names.format:
        assert names.binary_problem(lib) is None
        _runtime.check_binaries("path", lib, names)
    else:
        article = {"ELF": "an", "Mach-O": "a", "PE": "a"}[names.format]
        assert names.binary_problem(lib) == f"not {article} {names.format} file"
        with pytest.raises(RuntimeLoadError) as info:
            _runtime.check_binaries("path", lib, names)
        assert str(info.value) == (f"path runtime at {lib} cannot be loaded: "
                                   f"{names.library} is not {article} {names.format} file")


def test_a_macho_library_on_linux_names_the_file_and_elf(tmp_path):
    linux = platforms.platform_names("linux")
    (tmp_path / "libmlrt_core.so").write_bytes(ELF)
    (tmp_path / "libscipy_openblas.so").write_bytes(MACHO)   # the BLAS beside it is checked too
    with pytest.raises(RuntimeLoadError, match=r"cannot be loaded: libscipy_openblas\.so is not an ELF file$"):
        _runtime.check_binaries("bundled", tmp_path / "libmlrt_core.so", linux)


def test_truncated_elf_refused(tmp_path):
    lib = tmp_path / "libmlrt_core.so"
    lib.write_bytes(ELF[:32] + struct.pack("<QQ", 64, 0) + bytes(6) + struct.pack("<HHHH", 56, 1, 0, 0) + bytes(2))
    assert platforms.platform_names("linux").binary_problem(lib) == "truncated (64 bytes; its headers reach byte 120)"


def test_mz_without_pe_header_refused(tmp_path):
    lib = tmp_path / "mlrt_core.dll"
    lib.write_bytes(b"MZ" + bytes(58) + struct.pack("<I", 64) + b"NE\0\0")
    assert platforms.platform_names("win32").binary_problem(lib) == \
        "not a PE file (an MS-DOS program without a PE header)"


def test_missing_file_is_unreadable(tmp_path):
    assert platforms.platform_names("darwin").binary_problem(tmp_path / "none.dylib").startswith("unreadable: ")


@pytest.mark.parametrize("system", sorted(EXPECTED))
def test_library_files_of_a_runtime_folder(tmp_path, system):
    """The manifest's libraries: the core library and the BLAS beside it, not another platform's."""
    names = platforms.platform_names(system)
    for other in EXPECTED.values():
        (tmp_path / other[0]).write_bytes(b"")
        (tmp_path / other[2]).write_bytes(b"")
    assert names.library_files(tmp_path) == sorted([EXPECTED[system][0], EXPECTED[system][2]])


def test_build_lock_without_fcntl_uses_msvcrt(tmp_path, monkeypatch):
    """Where there is no fcntl (Windows) the lock is msvcrt.locking's, asked again
    while it times out."""
    calls = []

    def locking(fd, mode, nbytes):
        calls.append((fd, mode, nbytes))
        if len(calls) < 3:
            raise OSError(36, "Resource deadlock avoided")   # what LK_LOCK raises after its ten tries

    monkeypatch.setitem(sys.modules, "fcntl", None)   # import fcntl -> ImportError
    monkeypatch.setitem(sys.modules, "msvcrt", types.SimpleNamespace(LK_LOCK=1, locking=locking))
    with open(tmp_path / ".build.lock", "w") as lock:
        _build.lock_exclusively(lock)
        assert calls == [(lock.fileno(), 1, 1)] * 3


def test_build_lock_with_fcntl_excludes_another_holder(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    path = Path(tmp_path / ".build.lock")
    with open(path, "w") as mine:
        _build.lock_exclusively(mine)
        with open(path, "w") as other, pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)


@pytest.mark.parametrize("system, compiler, rpath, threads", [
    ("linux", "cc", ["-Wl,-rpath,$ORIGIN"], ["-pthread"]),
    ("darwin", "cc", ["-Wl,-rpath,@loader_path"], ["-pthread"]),
    # Windows: no rpath (the loader adds the folder to the DLL search path); MinGW's
    # runtime and threads inside the DLL, so it needs no MinGW DLL beside it
    ("win32", "gcc", [], ["-static-libgcc", "-Wl,-Bstatic", "-lwinpthread", "-Wl,-Bdynamic"]),
])
def test_link_command_per_platform(tmp_path, system, compiler, rpath, threads):
    names = platforms.platform_names(system)
    assert names.compiler == compiler
    out = tmp_path / names.library
    cmd = _build.link_command([compiler], names, out, [tmp_path / "a.o", tmp_path / "b.o"], tmp_path,
                              "scipy_openblas", ["-fsanitize=address"])
    assert cmd == [compiler, "-shared", "-o", str(out), str(tmp_path / "a.o"), str(tmp_path / "b.o"),
                   f"-L{tmp_path}", "-lscipy_openblas", *rpath, "-lm", "-fsanitize=address", *threads]


def test_compiler_default_is_the_platforms(monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    assert _build.compiler() == [_build.NAMES.compiler]
    monkeypatch.setenv("CC", "clang -O2")
    assert _build.compiler() == ["clang", "-O2"]
