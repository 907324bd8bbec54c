"""The binary wheel: `pip wheel .` gives a manylinux wheel that auditwheel accepts,
and that wheel installed into a fresh virtual environment on a machine with no C
compiler runs a model and the OCR sample.

The wheel is built from this checkout as a user would build it (pip, build
isolation: setuptools, scipy-openblas32 and, unless the library is cached, ziglang
from PyPI); the C objects and the library come from the build cache when `pip
install .` built them already.  The fresh
environment gets the wheel with --no-deps and borrows the test environment's
dependencies through a .pth line written after the install, so no download is
repeated.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not (sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64")),
    reason="the manylinux wheel is built on x86-64 and aarch64 Linux only")


def pip_wheel(out: Path, env: dict, timeout: int = 1200) -> Path:
    """`pip wheel .` of this checkout into `out` with `env`, as a user builds it; the wheel."""
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
                         capture_output=True, text=True, env=env, timeout=timeout)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (found,) = out.glob("mlrt-*.whl")
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "MLRT_LINK_CC")}
    return pip_wheel(tmp_path_factory.mktemp("wheel"), env)


def test_the_wheel_is_manylinux_2_28(wheel):
    assert re.fullmatch(rf"mlrt-[^-]+-py3-none-manylinux_2_28_{platform.machine()}\.whl", wheel.name), wheel.name
    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert show.returncode == 0, show.stderr
    text = " ".join(show.stdout.split())
    m = re.search(r'consistent with the following platform tag: "manylinux_2_(\d+)_', text)
    assert m, text
    assert int(m.group(1)) <= 28, text  # no newer than onnxruntime's manylinux_2_28


def _fresh_venv(folder: Path) -> Path:
    """A new venv, with nothing installed yet."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    return folder / "bin" / "python"


def _borrow_test_env(python: Path) -> None:
    """Let the venv see the test environment's packages after its own.  Written after
    the wheel is installed: pip would otherwise find the test environment's mlrt (a
    non-editable install, as in CI) and leave the wheel uninstalled."""
    own = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    Path(own, "borrowed-test-env.pth").write_text("".join(p + "\n" for p in sorted(borrowed)))


def test_the_wheel_runs_with_no_compiler(wheel, tmp_path):
    python = _fresh_venv(tmp_path / "venv")
    no_tools = tmp_path / "no-compiler"  # PATH: the venv and an empty folder, so no cc, gcc or ld
    no_tools.mkdir()
    env = dict(os.environ, PATH=f"{python.parent}:{no_tools}", CC="/nonexistent")
    env.pop("PYTHONPATH", None)
    env.pop("MLRT_RUNTIME", None)
    assert shutil.which("cc", path=env["PATH"]) is None and shutil.which("gcc", path=env["PATH"]) is None
    install = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
                             capture_output=True, text=True, env=env, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    _borrow_test_env(python)
    smoke = ("import numpy as np, onnx\n"
             "from onnx import helper, TensorProto as T\n"
             "import mlrt, mlrt.lowlevel as ort\n"
             "from mlrt.distribution import current_runtime\n"
             "g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g',\n"
             "    [helper.make_tensor_value_info('x', T.FLOAT, [3])], [helper.make_tensor_value_info('y', T.FLOAT, [3])])\n"
             "s = ort.InferenceSession(helper.make_model(g).SerializeToString())\n"
             "print(s.run(None, {'x': np.array([-1, 0, 2], np.float32)})[0].tolist())\n"
             "print(mlrt.__file__)\n"
             "print(current_runtime().path)\n")
    out = subprocess.run([python, "-c", smoke], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result, package, library = out.stdout.split("\n")[:3]
    assert result == "[0.0, 0.0, 2.0]"
    venv = str(tmp_path / "venv")
    assert package.startswith(venv) and library.startswith(venv), out.stdout  # the wheel's, not the test env's
    ocr = subprocess.run([python, str(ROOT / "samples" / "ocr.py")], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    assert ocr.returncode == 0, ocr.stderr[-3000:]
    rows = re.findall(r"^\s*(?:\d+,\d+\s+){4}[\d.]+  (.*)$", ocr.stdout, re.MULTILINE)
    assert rows == (ROOT / "samples" / "data" / "ocr.txt").read_text(encoding="utf-8").splitlines(), ocr.stdout
