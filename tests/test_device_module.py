"""A device provider is one module (native/providers/_base.py is all mlrt asks of it).

- A toy device provider, defined in this file alone and registered with
  `mlrt.native.providers.register`: its memory is host arrays behind a wrapper class, it
  runs Conv, Add and Relu on the CPU provider's kernels, and it takes frames made on its
  device through the high-level API, runs its partition and gives the results back
  through `LearningModelSession.evaluate`, with nothing of it named anywhere in mlrt.
- With the OpenCL provider made unimportable (its module and `native/opencl/`), the
  lowlevel, media and highlevel tests that need no OpenCL pass, and mlrt reports no
  OpenCL provider.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import mlrt
from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession)
from mlrt.media import BitmapPixelFormat, VideoFrame
from mlrt.native import providers

ROOT = Path(__file__).resolve().parents[1]


# -- the toy device ---------------------------------------------------------------------------------
class ToyTensor:
    """The toy device's memory: a host array behind a wrapper, so that nothing in mlrt
    mistakes it for a host value."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    shape = property(lambda self: self.array.shape)
    dtype = property(lambda self: self.array.dtype)


class ToyExecutionProvider(providers.ExecutionProvider):
    """Conv (and the optimizer's Conv + activation, FusedConv), Add and Relu on the toy
    device, computed by the CPU provider's kernels on the arrays inside the wrappers."""

    name = "ToyExecutionProvider"
    device = "toy"
    ran: list = []

    def supports(self, node, graph) -> bool:
        return (node.domain, node.op_type) in (("", "Conv"), ("", "Add"), ("", "Relu"), ("com.microsoft", "FusedConv"))

    def compile(self, graph):
        cpu = providers.available()["CPUExecutionProvider"]().compile(graph)
        ran = self.ran

        class Partition:
            def run(self, feeds):
                assert all(isinstance(v, ToyTensor) for v in feeds.values()), "feeds must be on the toy device"
                ran.append([n.op_type for n in graph.nodes])
                results = cpu.run({k: v.array for k, v in feeds.items()})
                return {k: ToyTensor(v) for k, v in results.items()}

        return Partition()

    def allocate(self, shape, dtype):
        return ToyTensor(np.empty(shape, dtype))

    def to_device(self, array):
        return array if self.owns(array) else ToyTensor(np.array(array))

    def to_host(self, value):
        return value.array if self.owns(value) else value

    def owns(self, value) -> bool:
        return isinstance(value, ToyTensor)


@pytest.fixture
def toy():
    providers.register(ToyExecutionProvider)
    ToyExecutionProvider.ran = []
    yield ToyExecutionProvider
    providers.unregister(ToyExecutionProvider.name)


def swap_model() -> bytes:
    """img (an image, BGR 0..255) -> Conv swapping B and R -> Relu -> Add -40 -> out (an image)."""
    x = helper.make_tensor_value_info("img", TP.FLOAT, [1, 3, 16, 16])
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("out", TP.FLOAT, [1, 3, 16, 16])
    y.type.denotation = "IMAGE"
    w = numpy_helper.from_array(np.eye(3, dtype=np.float32)[::-1].reshape(3, 3, 1, 1).copy(), "w")
    k = numpy_helper.from_array(np.array(-40, np.float32), "k")
    nodes = [helper.make_node("Conv", ["img", "w"], ["swapped"]), helper.make_node("Relu", ["swapped"], ["kept"]),
             helper.make_node("Add", ["kept", "k"], ["out"])]
    m = helper.make_model(helper.make_graph(nodes, "swap", [x], [y], [w, k]),
                          opset_imports=[helper.make_opsetid("", 17)])
    return m.SerializeToString()


def test_toy_device_takes_frames_runs_and_returns_through_the_high_level_api(toy):
    device = LearningModelDevice(LearningModelDeviceKind.GPU, device="toy")
    assert device.is_gpu and device.memory == "toy" and device.providers[0] == "ToyExecutionProvider"
    session = LearningModelSession(LearningModel.load(swap_model()), device)

    pixels = np.random.default_rng(5).integers(0, 256, (16, 16, 4), dtype=np.uint8)
    source = VideoFrame.from_numpy(pixels, BitmapPixelFormat.BGRA8).to_gpu("toy")
    out = VideoFrame.empty(16, 16, BitmapPixelFormat.BGRA8, device="toy")
    assert source.is_gpu and source.device == "toy" and isinstance(source._pixels, ToyTensor)
    assert out.device == "toy"

    binding = LearningModelBinding(session)
    binding.bind("img", source)
    binding.bind("out", out)
    result = session.evaluate(binding)
    result.raise_for_status()
    assert result.outputs["out"] is out
    (ran,) = toy.ran  # one partition, every node of it on the toy device (Conv + Relu fused by the optimizer)
    assert ran in (["FusedConv", "Add"], ["Conv", "Relu", "Add"])
    assert out.device == "toy" and isinstance(out._pixels, ToyTensor)  # the result stays on the device
    swapped = pixels[:, :, 2::-1].astype(np.float32)
    got = out.to_numpy()
    np.testing.assert_array_equal(got[:, :, :3], np.maximum(swapped - 40, 0))  # (detensorized: clamped to 0..255)
    assert (got[:, :, 3] == 255).all()

    # frames on the toy device copy, scale and convert as host frames do
    for bounds in (None, (2, 3, 5, 4)):
        on_toy, on_host = VideoFrame.empty(10, 8, "RGB8", device="toy"), VideoFrame.empty(10, 8, "RGB8")
        source.copy_to(on_toy, destination_bounds=bounds)
        source.to_cpu().copy_to(on_host, destination_bounds=bounds)
        assert on_toy.device == "toy"
        np.testing.assert_array_equal(on_toy.copy().to_numpy(), on_host.to_numpy())

    # the same frame on the host, into a tensor output: the same numbers come back
    host = LearningModelBinding(session)
    host.bind("img", VideoFrame.from_numpy(pixels, BitmapPixelFormat.BGRA8))
    tensor = session.evaluate(host).outputs["out"]
    assert isinstance(tensor, np.ndarray)
    np.testing.assert_array_equal(tensor[0].transpose(1, 2, 0), swapped - 40)


def test_toy_device_is_known_by_its_kind_only_while_registered(toy):
    import mlrt.lowlevel as ml
    assert "toy" in providers.device_kinds() and providers.for_device("gpu") is not providers.for_device("toy")
    assert ml.get_ort_device_type("toy") == 3  # not marked as a GPU: an NPU to onnxruntime's numbers
    assert ml.OrtDevice.make("toy", 0).device_type() == 3
    v = ml.OrtValue.ortvalue_from_numpy(np.arange(6, dtype=np.float32), "toy")
    assert v.device_name() == "toy"
    assert any(d.ep_name == "ToyExecutionProvider" for d in ml.get_ep_devices())
    providers.unregister(toy.name)
    assert "toy" not in providers.device_kinds()
    with pytest.raises(mlrt.DeviceError):
        LearningModelDevice(LearningModelDeviceKind.GPU, device="toy")


# -- no OpenCL at all ----------------------------------------------------------------------------------
BLOCKER = '''
"""Makes the OpenCL provider unimportable, as on a machine without it (a sitecustomize)."""
import importlib.abc
import sys

BLOCKED = ("mlrt.native.opencl", "mlrt.native.providers.opencl")


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None


sys.meta_path.insert(0, Blocker())
'''

# a slice across the layers (about 20 s; the whole suite but tests/native/opencl and
# tests/media/test_tensorize_gpu.py passes so too, its OpenCL tests skipped saying why)
WITHOUT_OPENCL = [
    "tests/lowlevel",
    "tests/media", "--ignore=tests/media/test_tensorize_gpu.py",
    "tests/highlevel/test_acceptance.py",
    "tests/native/test_partitioner.py", "tests/native/plan", "tests/native/ops/test_control_flow.py",
    "tests/test_import_cost.py",
    "tests/test_device_module.py::test_toy_device_takes_frames_runs_and_returns_through_the_high_level_api",
]

REPORT = textwrap.dedent('''
    import sys
    import mlrt.highlevel, mlrt.lowlevel as ml
    from mlrt.highlevel import LearningModelDevice, LearningModelDeviceKind
    from mlrt.media import VideoFrame
    assert ml.get_available_providers() == ["CPUExecutionProvider"], ml.get_available_providers()
    for make in (lambda: LearningModelDevice(LearningModelDeviceKind.GPU), lambda: VideoFrame.empty(4, 4, gpu=True)):
        try:
            make()
        except mlrt.DeviceError:
            pass
        else:
            raise AssertionError("a GPU device without any GPU provider")
    from mlrt.__main__ import info
    assert "OpenCL" not in info(), info()  # python -m mlrt lists no OpenCL device
    assert not [m for m in sys.modules if "opencl" in m], [m for m in sys.modules if "opencl" in m]
    print("no OpenCL provider")
''')


def test_everything_else_runs_without_opencl(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    report = subprocess.run([sys.executable, "-c", "import mlrt\n" + REPORT], capture_output=True, text=True,
                            env=env, cwd=ROOT, timeout=120)
    assert report.returncode == 0 and "no OpenCL provider" in report.stdout, report.stderr
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *WITHOUT_OPENCL],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    tail = run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    assert " passed" in tail and "error" not in tail.splitlines()[-1], tail
