"""pyproject.toml's cibuildwheel configuration, read by cibuildwheel itself: the five
wheels of README's platform table (Linux x86-64 and aarch64, Windows AMD64, macOS x86-64
and arm64), one CPython build each (the wheel is py3-none: cffi loads the library in ABI
mode), and the platform settings the build relies on.  Nothing is built here: the Linux
wheels are built and run by test_wheel.py and test_wheel_aarch64.py; Windows and macOS
need their own runners."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mlrt.distribution.platforms import platform_names

ROOT = Path(__file__).resolve().parents[2]


def _identifiers(*args: str) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.split()


@pytest.mark.parametrize("platform, archs, expected", [
    ("linux", None, ["cp311-manylinux_x86_64", "cp311-manylinux_aarch64"]),
    ("windows", None, ["cp311-win_amd64"]),
    # macOS builds its runner's own CPU ("native"): each of the two runners one wheel
    ("macos", "x86_64", ["cp311-macosx_x86_64"]),
    ("macos", "arm64", ["cp311-macosx_arm64"]),
])
def test_one_wheel_per_platform(platform, archs, expected):
    assert _identifiers("--platform", platform, *(["--archs", archs] if archs else [])) == expected


def test_platform_settings_match_the_build():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    # Windows: the compiler the build takes there by default, named for the runner too
    assert config["windows"]["environment"]["CC"] == platform_names("win32").compiler
    # the wheels carry their OpenBLAS and find it beside the library: only Linux's auditwheel checks
    assert config["windows"]["repair-wheel-command"] == config["macos"]["repair-wheel-command"] == ""
    assert config["linux"]["repair-wheel-command"].startswith("auditwheel show {wheel}")
    assert config["macos"]["archs"] == ["native"]
    assert config["test-command"] == "python -m mlrt"
