"""Build samples/custom_op_c/example_ops.c into a shared library with the system C compiler.

    python samples/custom_op_c/build.py [OUT_DIR]      # prints the library's path

`build(out_dir)` is what tests/lowlevel/test_custom_ops.py calls.  The compiler is
$CC, else the one Python was built with (sysconfig), else `cc`; the header is
native/include/mlrt.h of this checkout.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parents[1] / "native" / "include"


def compiler() -> list[str]:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)


def build(out_dir, source: Path = HERE / "example_ops.c", name: str = "libexample_ops.so") -> Path:
    """Compile `source` into out_dir/name; returns its path (CalledProcessError if the
    compiler fails)."""
    out = Path(out_dir) / name
    subprocess.run([*compiler(), "-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-I", str(INCLUDE),
                    str(source), "-o", str(out)], check=True, capture_output=True, text=True)
    return out


if __name__ == "__main__":
    print(build(sys.argv[1] if len(sys.argv) > 1 else HERE))
