"""The manylinux aarch64 wheel, built on x86-64 by cross compilation and run on an
emulated arm64 CPU: `pip wheel .` with the aarch64 cross compiler, the aarch64 OpenBLAS
and `zig cc` linking for manylinux_2_28 (native/_build.py, "a cross build"), checked by
auditwheel; then installed beside the aarch64 wheels of its dependencies and run by
Debian's arm64 Python under qemu-user (a Neoverse N1 model: NEON with the dot-product
extension): `python -m mlrt` names the NEON path, the nine light models of the onnx
package -- their weights made random (seeded), as their own are constant and give one
flat output -- match onnxruntime's outputs computed here on the host (onnxruntime does
not run under qemu) and their profiles name a NEON kernel path for every Conv, Gemm,
MatMul, element-wise (Relu), pooling and normalization node, and the OCR sample reads
its picture.

Needs what .ci/run's platform job installs and says where: aarch64-linux-gnu-gcc,
qemu-aarch64, the aarch64 OpenBLAS (MLRT_AARCH64_OPENBLAS) and the arm64 Python with
the dependencies' wheels (MLRT_AARCH64_ROOT, made by .ci/arm64_root.sh); skipped, saying
which is missing, without them."""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from test_wheel import pip_wheel

ROOT = Path(__file__).resolve().parents[2]
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
QEMU_CPU = "neoverse-n1"


def _needs() -> tuple[Path, Path]:
    if not (sys.platform == "linux" and platform.machine() == "x86_64"):
        pytest.skip("the aarch64 wheel is cross-built on x86-64 Linux (on aarch64, test_wheel.py builds it natively)")
    for tool, package in (("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"), ("qemu-aarch64", "qemu-user")):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian/Ubuntu: apt-get install {package})")
    blas = os.environ.get("MLRT_AARCH64_OPENBLAS")
    if not blas or not (Path(blas) / "lib" / "libscipy_openblas.so").is_file():
        pytest.skip("MLRT_AARCH64_OPENBLAS is not an unpacked scipy-openblas32 aarch64 folder (.ci/run downloads it)")
    root = os.environ.get("MLRT_AARCH64_ROOT")
    if not root or not (Path(root) / "root" / "usr" / "bin" / "python3.11").is_file() or not (Path(root) / "site").is_dir():
        pytest.skip("MLRT_AARCH64_ROOT is not an arm64 Python with mlrt's dependencies (made by .ci/arm64_root.sh)")
    return Path(blas), Path(root)


def _python(root: Path) -> list[str]:
    return ["qemu-aarch64", "-L", str(root / "root"), str(root / "root" / "usr" / "bin" / "python3.11")]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    blas, root = _needs()
    out = tmp_path_factory.mktemp("wheel_aarch64")
    env = {k: v for k, v in os.environ.items() if k != "MLRT_LINK_CC"}
    env.update(CC="aarch64-linux-gnu-gcc", MLRT_TARGET_ARCH="aarch64", MLRT_BLAS_DIR=str(blas),
               MLRT_TARGET_PYTHON=shlex.join(_python(root)), QEMU_CPU=QEMU_CPU)
    return pip_wheel(out, env, timeout=1800)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[list[str], dict]:
    """The wheel unpacked as pip would install it, and how to run the arm64 Python on it."""
    _, root = _needs()
    site = tmp_path_factory.mktemp("site_aarch64")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MLRT_RUNTIME", "LD_"))}
    env.update(PYTHONPATH=f"{site}:{root / 'site'}", QEMU_CPU=QEMU_CPU, PYTHONDONTWRITEBYTECODE="1")
    return _python(root), env


def test_the_wheel_is_manylinux_2_28_aarch64(wheel):
    assert re.fullmatch(r"mlrt-[^-]+-py3-none-manylinux_2_28_aarch64\.whl", wheel.name), wheel.name
    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert show.returncode == 0, show.stderr
    text = " ".join(show.stdout.split())
    m = re.search(r'consistent with the following platform tag: "manylinux_2_(\d+)_aarch64"', text)
    assert m and int(m.group(1)) <= 28, text
    with zipfile.ZipFile(wheel) as z:
        library = z.read("mlrt/native/libmlrt_core.so")
    assert library[:4] == b"\x7fELF" and int.from_bytes(library[18:20], "little") == 183  # EM_AARCH64


def test_info_names_the_neon_path(installed):
    python, env = installed
    run = subprocess.run([*python, "-m", "mlrt"], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "CPU kernel paths: neon (features: neon dotprod fp16;" in run.stdout, run.stdout


def _randomized(path: Path, seed: int) -> onnx.ModelProto:
    """The light model with each weight its ConstantOfShape makes replaced by seeded random
    values: He-scaled for weights, uniform in [0.5, 1.5] for vectors (batch-norm
    variances among them)."""
    m = onnx.load(str(path))
    rng = np.random.default_rng(seed)
    shapes = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    kept = []
    for node in m.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            shape = [int(d) for d in shapes[node.input[0]]]
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 0
            w = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in) if fan_in else rng.uniform(0.5, 1.5, shape)
            m.graph.initializer.append(numpy_helper.from_array(w.astype(np.float32), node.output[0]))
        else:
            kept.append(node)
    del m.graph.node[:]
    m.graph.node.extend(kept)
    return m


_EMULATED = r"""
import json, sys, numpy as np
from pathlib import Path
import mlrt.lowlevel as ml
folder = Path(sys.argv[1])
for model in sorted(folder.glob("*.onnx")):
    x = np.load(model.with_suffix(".in.npy"))
    so = ml.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(folder / model.stem)
    s = ml.InferenceSession(str(model), so)
    (y,) = s.run(None, {s.get_inputs()[0].name: x})
    np.save(model.with_suffix(".out.npy"), y)
    events = json.load(open(s.end_profiling()))
    paths = [[e["args"]["op_name"], e["args"].get("kernel_path")] for e in events if e["cat"] == "Node"]
    model.with_suffix(".paths.json").write_text(json.dumps(paths))
    print(model.stem, flush=True)
"""


# the light models' element-wise, pooling and normalization operators (left by mlrt's optimizer)
_LOOPS = {"Relu", "BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool", "LRN", "Softmax"}


def test_light_models_match_onnxruntime(installed, tmp_path):
    import onnxruntime as ort
    python, env = installed
    expected = {}
    for k, path in enumerate(sorted(LIGHT.glob("light_*.onnx"))):
        m = _randomized(path, k)
        inits = {i.name for i in m.graph.initializer}
        (inp,) = [i for i in m.graph.input if i.name not in inits]
        x = np.random.default_rng(100 + k).standard_normal([d.dim_value for d in inp.type.tensor_type.shape.dim])
        x = x.astype(np.float32)
        onnx.save(m, str(tmp_path / f"{path.stem}.onnx"))
        np.save(tmp_path / f"{path.stem}.in.npy", x)
        so = ort.SessionOptions()
        so.log_severity_level = 3
        expected[path.stem] = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
            None, {inp.name: x})[0]
    assert len(expected) == 9
    seen = set()
    run = subprocess.run([*python, "-c", _EMULATED, str(tmp_path)], env=env, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    for name, want in expected.items():
        got = np.load(tmp_path / f"{name}.out.npy")
        assert got.shape == want.shape, name
        scale = float(np.max(np.abs(want)))
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * scale, err_msg=name)
        assert np.argmax(got) == np.argmax(want), name
        # the profiler names each node's kernel path: every product, element-wise, pooling
        # and normalization node runs on NEON (data movement, Concat and Reshape, names none)
        paths = json.loads((tmp_path / f"{name}.paths.json").read_text())
        products = [(op, path) for op, path in paths if op in ("Conv", "FusedConv", "Gemm", "FusedGemm", "MatMul")]
        assert products and all(path and path.endswith("/neon") for _, path in products), (name, products)
        loops = [(op, path) for op, path in paths if op in _LOOPS]
        assert all(path and path.endswith("/neon") for _, path in loops), (name, loops)
        seen.update(op for op, _ in loops)
    assert seen == _LOOPS, seen


def test_ocr_sample_reads_its_picture(installed):
    python, env = installed
    sys.path.insert(0, str(ROOT / "samples"))
    try:
        import ocr_models
        ocr_models.fetch_all()  # here, as the sample would (the emulated Python has no pip to fetch with)
        env = dict(env, MLRT_MODEL_CACHE=str(ocr_models.cache_dir()))
    finally:
        sys.path.remove(str(ROOT / "samples"))
    run = subprocess.run([*python, str(ROOT / "samples" / "ocr.py")], env=env, capture_output=True, text=True,
                         timeout=1800, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    rows = re.findall(r"^\s*(?:\d+,\d+\s+){4}[\d.]+  (.*)$", run.stdout, re.MULTILINE)
    assert rows == (ROOT / "samples" / "data" / "ocr.txt").read_text(encoding="utf-8").splitlines(), run.stdout
