"""Package build: compiles libmlrt_core.so from native/ into the mlrt.native package.

All metadata lives in pyproject.toml; this file only adds the native build step to
build_py, so `pip install .` and `pip install -e .` both produce the library, and
tags the wheel for the platform it holds a library for.

The wheel is a manylinux wheel: the C files are compiled by the system's compiler (cc,
gcc: what the kernels are tuned with) and linked by `zig cc` from the `ziglang`
package against glibc 2.28's symbols, so the library loads on every Linux that
onnxruntime's manylinux_2_28 wheels load on, whatever glibc built it (setup_backend.py
asks for ziglang only when that library is not in the build cache already).  Without
ziglang (a build with --no-build-isolation in an environment lacking it), or with CC or
MLRT_LINK_CC set, the system's linker is used and the wheel is tagged linux_<arch>,
for `auditwheel repair` to retag.
"""

import importlib.util
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


class BuildPyWithNative(build_py):
    def run(self):
        super().run()
        editable = getattr(self, "editable_mode", False)
        if editable:
            out = ROOT / "native"                     # editable: beside the sources
        else:
            out = Path(self.build_lib) / "mlrt" / "native"
        nb = _native_build()
        version = self.distribution.get_version()
        linker = nb.manylinux_linker() if not editable and nb.can_link_manylinux(version) else None
        self.distribution.mlrt_manylinux_tag = (
            f"manylinux_{nb.MANYLINUX_GLIBC.replace('.', '_')}_{nb.arch()}" if linker else None)
        try:
            nb.build(out, version=version, link_cc=linker)
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
        return "py3", "none", getattr(self.distribution, "mlrt_manylinux_tag", None) or plat


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildPyWithNative, "bdist_wheel": PlatformWheel})
