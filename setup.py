"""Package build: compiles libmlrt_core.so from native/ into the mlrt.native package.

All metadata lives in pyproject.toml; this file only adds the native build step to
build_py, so `pip install .` and `pip install -e .` both produce the library, and
tags the wheel for the platform it holds a library for.

The wheel is a manylinux wheel: the C files are compiled by the system's compiler (cc,
gcc: what the kernels are tuned with) and linked by `zig cc` from the `ziglang`
package against glibc 2.28's symbols, so the library loads on every Linux that
onnxruntime's manylinux_2_28 wheels load on, whatever glibc built it.  Without ziglang
(a build with --no-build-isolation in an environment lacking it), or with CC or
MLRT_LINK_CC set, the system's linker is used and the wheel is tagged linux_<arch>,
for `auditwheel repair` to retag.
"""

import importlib.util
import os
import platform
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

ROOT = Path(__file__).resolve().parent


def _native_build():
    spec = importlib.util.spec_from_file_location("mlrt_native_build", ROOT / "native" / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MANYLINUX_GLIBC = "2.28"  # onnxruntime's manylinux_2_28 wheels: the same Linux releases


def _arch() -> str:
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())


def _manylinux_linker() -> str | None:
    """`zig cc` linking against glibc MANYLINUX_GLIBC's symbols, where ziglang is
    installed and nobody chose the compiler or linker; else None."""
    if sys.platform != "linux" or _arch() not in ("x86_64", "aarch64"):
        return None
    if os.environ.get("CC") or os.environ.get("MLRT_LINK_CC") or importlib.util.find_spec("ziglang") is None:
        return None
    return f"{sys.executable} -m ziglang cc -target {_arch()}-linux-gnu.{MANYLINUX_GLIBC}"


class BuildPyWithNative(build_py):
    def run(self):
        super().run()
        editable = getattr(self, "editable_mode", False)
        if editable:
            out = ROOT / "native"                     # editable: beside the sources
        else:
            out = Path(self.build_lib) / "mlrt" / "native"
        nb = _native_build()
        linker = None if editable else _manylinux_linker()
        self.distribution.mlrt_manylinux = linker is not None
        try:
            nb.build(out, version=self.distribution.get_version(), link_cc=linker)
        except nb.BuildError as exc:  # one line; setuptools prints it last, as "error: ..."
            from setuptools.errors import CompileError
            raise CompileError(str(exc)) from None
        if not editable:  # ship the library, not the build's leftovers
            import shutil
            shutil.rmtree(out / ".obj", ignore_errors=True)
            (out / ".build.lock").unlink(missing_ok=True)


class BinaryDistribution(Distribution):
    """A distribution that holds a native library: installed as platform code."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """The wheel holds a native library, not Python ABI code (cffi loads it in ABI
    mode): py3-none-<platform>, manylinux_2_28 when the library was linked for it."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        if getattr(self.distribution, "mlrt_manylinux", False):
            plat = f"manylinux_{MANYLINUX_GLIBC.replace('.', '_')}_{_arch()}"
        return "py3", "none", plat


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildPyWithNative, "bdist_wheel": PlatformWheel})
