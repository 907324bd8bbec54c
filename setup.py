"""Package build: compiles libmlrt_core.so from native/ into the mlrt.native package.

All metadata lives in pyproject.toml; this file only adds the native build step to
build_py, so `pip install .` and `pip install -e .` both produce the library.
"""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _native_build():
    spec = importlib.util.spec_from_file_location("mlrt_native_build", ROOT / "native" / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithNative(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            out = ROOT / "native"                     # editable: beside the sources
        else:
            out = Path(self.build_lib) / "mlrt" / "native"
        nb = _native_build()
        nb.build(out, version=self.distribution.get_version())
        if not getattr(self, "editable_mode", False):  # ship the library, not the build's leftovers
            import shutil
            shutil.rmtree(out / ".obj", ignore_errors=True)
            (out / ".build.lock").unlink(missing_ok=True)


setup(cmdclass={"build_py": BuildPyWithNative})
