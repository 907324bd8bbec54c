"""The package's build backend: setuptools', asking for ziglang only when it will link.

setup.py links the library with `zig cc` (from the ziglang package) against glibc
2.28's symbols, for a manylinux_2_28 wheel.  Installing ziglang into pip's isolated
build environment costs about 11 s and 400 MB of disk, most of an install with no C
change -- where the library linked before comes from the build cache and nothing is
linked (native/_build.py).  So ziglang is a build requirement only where setup.py
would link with it (Linux on x86-64 or aarch64, neither CC nor MLRT_LINK_CC set) and
the build cache does not hold that library already.  Everything else is setuptools'
own backend.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (the hooks this file leaves as they are)


def get_requires_for_build_wheel(config_settings=None):
    requires = _setuptools.get_requires_for_build_wheel(config_settings)
    spec = importlib.util.spec_from_file_location("mlrt_native_build", Path(__file__).parent / "native" / "_build.py")
    nb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nb)
    if nb.manylinux_linker() is not None and not nb.can_link_manylinux(nb._project_version()):
        requires.append(nb.ZIGLANG)
    return requires
