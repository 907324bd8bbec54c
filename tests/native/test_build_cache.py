"""native/_build.py's object cache, progress lines and compiler handling.

pip builds in a fresh temporary folder each time, so objects are kept in a cache shared
by every build ($MLRT_BUILD_CACHE, default ~/.cache/mlrt/build), keyed by the source,
the headers, the flags and the compiler.  Most tests compile two small C files through
`compile_objects`, the step `build` compiles the library with, into temporary folders
with a temporary cache; one builds the whole library twice (about 40 s on two cores).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mlrt
from mlrt.native import _build

needs_cc = pytest.mark.skipif(shutil.which(_build.compiler()[0]) is None, reason="no C compiler")

HEADER = "#define TINY_SCALE {scale}\nint tiny_b(int x);\n"
SOURCES = {
    "a.c": '#include "tiny.h"\nint tiny_a(int x) { return TINY_SCALE * tiny_b(x) + 1; }\n',
    "b.c": '#include "tiny.h"\nint tiny_b(int x) { return TINY_SCALE * x; }\n',
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    """Two C files and a header, a cache folder, and an environment with no build
    settings of the caller's (CC, MLRT_BUILD_CACHE, XDG_CACHE_HOME all point here)."""
    for name in ("CC", "MLRT_BUILD_CACHE", "MLRT_SANITIZE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "tiny.h").write_text(HEADER.format(scale=2))
    (tmp_path / "src").mkdir()
    for name, text in SOURCES.items():
        (tmp_path / "src" / name).write_text(text)
    return tmp_path


def _compile(project: Path, out: str, *, cache: Path | None, flags: list[str] = (), cc: str | None = None):
    srcs = sorted((project / "src").glob("*.c"))
    return _build.compile_objects(_build.compiler(cc), srcs, project / out / ".obj",
                                  ["-O1", "-fPIC", f"-I{project / 'include'}", *flags],
                                  header_files=[], cache=cache, jobs=2)


def _cached(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.o"))


@needs_cc
def test_a_second_build_in_another_folder_compiles_nothing(project, capfd):
    cache = project / "cache"
    cache.mkdir()
    objs1, first = _compile(project, "one", cache=cache)
    assert (first.total, first.compiled, first.cached) == (2, 2, 0)
    assert len(_cached(cache)) == 2
    objs2, second = _compile(project, "two", cache=cache)
    assert (second.compiled, second.cached) == (0, 2)
    assert [p.read_bytes() for p in objs2] == [p.read_bytes() for p in objs1]
    assert all(p.parent == project / "two" / ".obj" for p in objs2)
    _, again = _compile(project, "two", cache=None)  # from the folder's own .obj
    assert (again.compiled, again.cached) == (0, 2)
    err = capfd.readouterr().err
    assert "mlrt: compiling C core: 2 of 2 files to compile (0 from cache)" in err
    assert re.search(r"mlrt: compiling C core: 2/2 files: src/[ab]\.c", err)
    assert "mlrt: compiling C core: 0 of 2 files to compile (2 from cache)" in err
    assert not list(project.rglob("*.tmp"))


@needs_cc
def test_a_flag_header_source_or_compiler_change_compiles_again(project):
    cache = project / "cache"
    cache.mkdir()
    assert _compile(project, "one", cache=cache)[1].compiled == 2
    assert _compile(project, "two", cache=cache, flags=["-DTINY_EXTRA=1"])[1].compiled == 2
    (project / "include" / "tiny.h").write_text(HEADER.format(scale=3))
    assert _compile(project, "three", cache=cache)[1].compiled == 2
    (project / "src" / "a.c").write_text(SOURCES["a.c"] + "int tiny_c(void) { return 0; }\n")
    assert _compile(project, "four", cache=cache)[1].compiled == 1
    # CC with arguments: split, run, and part of the key (`env` runs the compiler it is given)
    objs, stats = _compile(project, "five", cache=cache, cc=f"env LC_ALL=C {_build.compiler()[0]}")
    assert stats.compiled == 2 and all(p.exists() for p in objs)
    assert _compile(project, "six", cache=cache)[1].compiled == 0


@needs_cc
def test_the_objects_work(project):
    objs, _ = _compile(project, "one", cache=project / "cache")
    lib = project / "libtiny.so"
    subprocess.run([*_build.compiler(), "-shared", "-o", str(lib), *map(str, objs)], check=True)
    assert ctypes.CDLL(str(lib)).tiny_a(5) == 21


def test_where_the_cache_is(project, monkeypatch):
    assert _build.build_cache() == project / "xdg" / "mlrt" / "build"
    monkeypatch.setenv("MLRT_BUILD_CACHE", str(project / "mine"))
    assert _build.build_cache() == project / "mine" and (project / "mine").is_dir()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("MLRT_BUILD_CACHE")
    monkeypatch.setenv("HOME", str(project / "home"))
    assert _build.build_cache() == project / "home" / ".cache" / "mlrt" / "build"


@needs_cc
@pytest.mark.parametrize("value", ["0", "off", "OFF"])
def test_mlrt_build_cache_0_or_off_bypasses_the_cache(project, monkeypatch, value):
    monkeypatch.setenv("MLRT_BUILD_CACHE", value)
    assert _build.build_cache() is None
    assert _compile(project, "one", cache=_build.build_cache())[1].compiled == 2
    assert _compile(project, "two", cache=_build.build_cache())[1].compiled == 2
    assert not (project / "xdg").exists()


@needs_cc
def test_an_unwritable_cache_is_one_line_and_no_cache(project, monkeypatch, capfd):
    (project / "afile").write_text("")
    monkeypatch.setenv("MLRT_BUILD_CACHE", str(project / "afile" / "cache"))  # (root may write anywhere)
    assert _build.build_cache() is None
    err = capfd.readouterr().err
    assert len(err.splitlines()) == 1 and "cannot be written" in err and "compiling without it" in err
    assert _compile(project, "one", cache=None)[1].compiled == 2


@needs_cc
def test_the_cache_keeps_the_newest_objects_of_a_file(project, monkeypatch):
    monkeypatch.setattr(_build, "CACHE_KEEP", 2)
    cache = project / "cache"
    cache.mkdir()
    for n in range(4):
        _compile(project, f"out{n}", cache=cache, flags=[f"-DTINY_VARIANT={n}"])
    names = _cached(cache)
    assert len(names) == 4 and sum(n.startswith("src.a-") for n in names) == 2
    # the newest two are the ones kept
    assert _compile(project, "again", cache=cache, flags=["-DTINY_VARIANT=3"])[1].compiled == 0
    assert _compile(project, "again0", cache=cache, flags=["-DTINY_VARIANT=0"])[1].compiled == 2


@needs_cc
def test_a_compile_error_names_the_file(project):
    (project / "src" / "b.c").write_text("int tiny_b(int x) { return x +; }\n")
    with pytest.raises(_build.BuildError) as info:
        _compile(project, "one", cache=project / "cache")
    message = str(info.value)
    assert "\n" not in message and "compiling src/b.c failed" in message
    assert not list((project / "one" / ".obj").glob("src.b-*"))
    assert not list(project.rglob("*.tmp"))


def test_cc_is_split_like_a_shell_command(monkeypatch):
    monkeypatch.setenv("CC", "python -m ziglang cc -target 'x86_64-linux-gnu.2.28'")
    assert _build.compiler() == ["python", "-m", "ziglang", "cc", "-target", "x86_64-linux-gnu.2.28"]
    assert _build.compiler("gcc-12 -m64") == ["gcc-12", "-m64"]
    monkeypatch.setenv("CC", "")
    assert _build.compiler() == ["cc"]


def test_a_missing_compiler_is_one_line_saying_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent -O2")
    out = tmp_path / "out"
    with pytest.raises(_build.BuildError) as info:
        _build.build(out)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("mlrt: building from source needs a C compiler, and '/nonexistent'")
    assert "apt-get install gcc" in message and "prebuilt mlrt wheel" in message
    assert not out.exists()
    assert _build.sanitizer_preload("address") == []
    # from the command line: that line last, no traceback
    builder = Path(__file__).resolve().parents[2] / "native" / "_build.py"  # the checkout's, which setup.py runs
    run = subprocess.run([sys.executable, builder, "--out", str(out)], capture_output=True, text=True,
                         env=dict(os.environ, CC="/nonexistent"), timeout=120)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == message
    assert "Traceback" not in run.stderr


@needs_cc
def test_the_library_built_twice_compiles_and_links_once(tmp_path, monkeypatch, capfd):
    """The whole build, as pip runs it: a fresh out folder each time, one shared cache.
    The second build finds the library linked from the same objects; another linker
    links again, from the cached objects."""
    for name in ("CC", "MLRT_SANITIZE", "MLRT_LINK_CC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MLRT_BUILD_CACHE", str(tmp_path / "cache"))
    jobs = os.cpu_count() or 2
    assert _build.cached_library(mlrt.__version__) is None
    first = _build.build(tmp_path / "one", version=mlrt.__version__, jobs=jobs)
    count = len(_build.sources())
    assert f"({count} files compiled, 0 from cache)" in capfd.readouterr().err
    cached = _build.cached_library(mlrt.__version__)
    assert cached is not None and cached.read_bytes() == first.read_bytes()
    second = _build.build(tmp_path / "two", version=mlrt.__version__, jobs=jobs)
    err = capfd.readouterr().err
    assert f"nothing changed: the library linked from these {count} objects before" in err, err
    assert "compiling" not in err and not (tmp_path / "two" / ".obj").exists()
    assert len(list((tmp_path / "cache").glob("*.o"))) == count
    assert first.read_bytes() == second.read_bytes()
    assert json.loads((tmp_path / "two" / _build.MANIFEST).read_text())["files"][_build.LIBRARY] \
        == _build.sha256_file(second)
    linker = f"env LC_ALL=C {_build.compiler()[0]}"  # another linker: another library
    assert _build.cached_library(mlrt.__version__, link_cc=linker) is None
    _build.build(tmp_path / "three", version=mlrt.__version__, jobs=jobs, link_cc=linker)
    assert f"(0 files compiled, {count} from cache)" in capfd.readouterr().err
    assert len(list((tmp_path / "cache").glob("link.*.so"))) == 2


@needs_cc
def test_the_library_key_names_zig_without_its_python(monkeypatch):
    """setup_backend.py asks whether the zig-linked library is cached from a Python
    that is not the one that will link: the key leaves the Python out, not the target."""
    monkeypatch.delenv("MLRT_SANITIZE", raising=False)

    def name(link):
        return _build._Plan("1.0", None, None, link).library_name()

    zig = "-m ziglang cc -target x86_64-linux-gnu.2.28"
    assert name(f"/tmp/a/bin/python {zig}") == name(f"/tmp/b/bin/python3 {zig}")
    assert name(f"python {zig}") != name("python -m ziglang cc -target x86_64-linux-gnu.2.34")
    assert name(f"python {zig}") != _build._Plan("1.1", None, None, f"python {zig}").library_name()


@pytest.mark.skipif(not (sys.platform == "linux" and _build.arch() in ("x86_64", "aarch64")),
                    reason="the manylinux link is for x86-64 and aarch64 Linux")
@needs_cc
def test_ziglang_is_a_build_requirement_only_when_the_build_links(tmp_path, monkeypatch):
    """The build backend adds ziglang (~11 s to install in pip's build environment) to
    the wheel's build requirements unless the library it would link is cached."""
    import importlib.util
    for name in ("CC", "MLRT_SANITIZE", "MLRT_LINK_CC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MLRT_BUILD_CACHE", str(tmp_path / "cache"))
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("mlrt_setup_backend", root / "setup_backend.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    monkeypatch.setattr(backend, "_setuptools", type("Setuptools", (), {
        "get_requires_for_build_wheel": staticmethod(lambda config_settings=None: ["wheel-of-setuptools"])}))
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "ziglang" else find_spec(n, *a))
    assert backend.get_requires_for_build_wheel() == ["wheel-of-setuptools", _build.ZIGLANG]
    version = _build._project_version()
    library = _build._Plan(version, None, None, _build.manylinux_linker()).library_name()
    (tmp_path / "cache" / library).write_bytes(b"as if linked before")
    assert backend.get_requires_for_build_wheel() == ["wheel-of-setuptools"]
    monkeypatch.setenv("MLRT_BUILD_CACHE", "0")
    assert backend.get_requires_for_build_wheel() == ["wheel-of-setuptools", _build.ZIGLANG]


def test_the_build_module_loads_as_setup_py_loads_it():
    """setup.py runs native/_build.py as a module that is not in sys.modules."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("mlrt_native_build_as_setup_py", _build.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.compiler("cc -O2") == ["cc", "-O2"] and repr(module.CompileStats(3, 1, 2))


def test_a_cross_build_without_cc_says_so_first(monkeypatch):
    """MLRT_TARGET_ARCH without CC would compile for this machine and fail at the link: it
    ends in one line naming CC instead."""
    monkeypatch.setenv("MLRT_TARGET_ARCH", "aarch64")
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(_build.BuildError, match="needs CC naming its cross compiler"):
        _build._Plan("0.0.0", None, "", None)
