"""Importing mlrt's layers loads nothing heavy: onnx (with ml_dtypes), pyopencl and the
OpenCL runtime, OpenCV, Pillow, cffi and the native library wait for their first use
(benchmarks/import_time.py times the import against onnxruntime's).  Checked in a fresh
interpreter, since this one has imported everything; the same process then makes a
session, a frame and a Windows ML-style evaluation to show that what was left out
loads when it is used -- and that CPU work still never loads OpenCL."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from onnx import AttributeProto, TensorProto, helper

# what `import mlrt.lowlevel, mlrt.media, mlrt.highlevel` must leave unloaded
HEAVY = ("onnx", "ml_dtypes", "google.protobuf", "pyopencl", "mlrt.native.opencl._device", "cv2", "PIL", "cffi",
         "scipy", "importlib.metadata", "mlrt._version",
         # the session pipeline and the native library's glue, loaded by the first session or frame tensorized
         "mlrt.lowlevel._session", "mlrt.lowlevel._custom_ops", "mlrt.native.graph", "mlrt.native.load", "mlrt.native.partitioner",
         "mlrt.native._lib")
# what CPU-only work must never load
GPU_ONLY = ("pyopencl", "mlrt.native.opencl._device", "mlrt.media._gpu")

SCRIPT = """
import json, sys
import mlrt.lowlevel, mlrt.media, mlrt.highlevel
report = {"after_import": sorted(m for m in HEAVY if m in sys.modules)}

import numpy as np
from mlrt import lowlevel as ort
from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession)
from mlrt.media import VideoFrame

session = ort.InferenceSession(sys.argv[1])
x = np.array([[[[-1, 2], [3, -4]]]], np.float32)
report["relu"] = session.run(None, {"x": x})[0].tolist()
report["providers"] = session.get_providers()
report["version"] = [mlrt.__version__, ort.__version__, ort.version, ort.get_version_string()]

frame = VideoFrame.from_numpy(np.full((2, 2, 3), 51, np.uint8), "BGR8")
model = LearningModel.load(sys.argv[1])
hl = LearningModelSession(model, LearningModelDevice(LearningModelDeviceKind.CPU))
binding = LearningModelBinding(hl)
binding.bind("x", frame)
report["frame"] = np.asarray(hl.evaluate(binding).outputs["y"]).tolist()
report["after_use"] = sorted(m for m in HEAVY + GPU_ONLY if m in sys.modules)
print(json.dumps(report))
"""


def relu_image_model(path) -> None:
    """x float [1, 1, 2, 2], an IMAGE (Gray8, values 0..255) -> Relu -> y."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 2])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"Image.BitmapPixelFormat": "Gray8", "Image.NominalPixelRange": "NominalRange_0_255"})
    path.write_bytes(model.SerializeToString())


def test_import_loads_nothing_heavy_and_use_loads_it(tmp_path):
    relu_image_model(tmp_path / "relu.onnx")
    code = f"HEAVY = {HEAVY!r}\nGPU_ONLY = {GPU_ONLY!r}\n" + SCRIPT
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "relu.onnx")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["after_import"] == []
    assert report["relu"] == [[[[0.0, 2.0], [3.0, 0.0]]]] and report["providers"] == ["CPUExecutionProvider"]
    ours, *ort_api = report["version"]  # (onnxruntime's API level, labelled with mlrt's version)
    assert ours and len(set(ort_api)) == 1 and ort_api[0].endswith(f"+mlrt.{ours}")
    gray = np.asarray(report["frame"])
    assert gray.shape == (1, 1, 2, 2) and np.allclose(gray, 51)
    assert {"onnx", "ml_dtypes", "cffi", "mlrt.lowlevel._session"} <= set(report["after_use"])  # loaded on use
    assert not set(GPU_ONLY) & set(report["after_use"])  # CPU work never loads OpenCL


def test_spelled_out_onnx_numbers():
    """The ONNX numbers native/graph.py writes out (to read models without importing onnx first)."""
    from mlrt.native import graph
    assert graph._MAY_HOLD_GRAPHS == (AttributeProto.UNDEFINED, AttributeProto.GRAPH, AttributeProto.GRAPHS)
