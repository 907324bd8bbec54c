"""Faults on the OpenCL side: a program that does not build leaves the nodes that need
it on the CPU (with a warning saying why); the device running out of resources or
failing mid-run moves that partition to the CPU with a warning.  The answer is still
right, and the session keeps working."""

import logging

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import mlrt.lowlevel as ml
from mlrt._errors import DeviceError
from mlrt.native.opencl import _device, _drivers, _plan, _programs
from opencl_check import opencl_device

OPENCL = ["OpenCLExecutionProvider", "CPUExecutionProvider"]


def _model():
    nodes = [h.make_node("Relu", ["x"], ["a"], name="relu"), h.make_node("Sigmoid", ["a"], ["y"], name="sigmoid")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4, 5])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [4, 5])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


X = np.linspace(-3, 3, 20, dtype=np.float32).reshape(4, 5)
EXPECTED = 1 / (1 + np.exp(-np.maximum(X, 0)))


def _placed(sess):
    return {p for _, op, p in sess.get_node_assignment() if not op.startswith("Memcpy")}


def test_a_program_that_does_not_build_leaves_its_nodes_on_the_cpu(tmp_path, monkeypatch, caplog):
    device = opencl_device()
    broken = tmp_path / "opencl"
    broken.mkdir()
    for source in [_programs.HERE / "_common.cl", *_programs.HERE.glob("*.h")]:  # the preamble and its headers
        (broken / source.name).write_text(source.read_text())
    (broken / "activation.cl").write_text("__kernel void mlrt_relu(__global float *x) { this is not C; }\n")
    monkeypatch.setattr(_programs, "source_dir", lambda: broken)
    monkeypatch.setattr(device, "_programs", {})  # forget programs built by earlier tests
    monkeypatch.setattr(device, "_broken", {})
    monkeypatch.setenv("MLRT_OPENCL_CACHE", str(tmp_path / "cache"))
    with caplog.at_level(logging.WARNING, logger="mlrt"):
        sess = ml.InferenceSession(_model(), providers=OPENCL)
    assert _placed(sess) == {"CPUExecutionProvider"}
    assert any("'activation:float32' failed to build" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)


def test_out_of_resources_falls_back_at_run(monkeypatch):
    opencl_device()
    sess = ml.InferenceSession(_model(), providers=OPENCL)
    assert _placed(sess) == {"OpenCLExecutionProvider"}

    def exhausted(self, nbytes):
        raise DeviceError(f"OpenCL device {self.name}: cannot allocate {nbytes} bytes (injected out-of-resources)")

    monkeypatch.setattr(_device.Device, "allocate", exhausted)
    with pytest.warns(RuntimeWarning, match="injected out-of-resources"):
        (y,) = sess.run(None, {"x": X})
    np.testing.assert_allclose(y, EXPECTED, rtol=1e-6)
    assert _placed(sess) == {"CPUExecutionProvider"}
    np.testing.assert_allclose(sess.run(None, {"x": X * 2})[0], 1 / (1 + np.exp(-np.maximum(X * 2, 0))), rtol=1e-6)


def test_device_error_mid_run_falls_back(monkeypatch):
    opencl_device()
    sess = ml.InferenceSession(_model(), providers=OPENCL)
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)  # planned and run on OpenCL
    calls = []
    real = _plan.cl.enqueue_nd_range_kernel

    def flaky(queue, kernel, gsize, lsize, *args, **kwargs):
        calls.append(kernel.function_name)
        if len(calls) == 2:  # the second kernel of the run fails
            raise _drivers.cl.RuntimeError("clEnqueueNDRangeKernel failed: OUT_OF_RESOURCES (injected)")
        return real(queue, kernel, gsize, lsize, *args, **kwargs)

    monkeypatch.setattr(_plan.cl, "enqueue_nd_range_kernel", flaky)
    with pytest.warns(RuntimeWarning, match="OUT_OF_RESOURCES"):
        (y,) = sess.run(None, {"x": X})
    assert calls == ["mlrt_relu", "mlrt_sigmoid"]
    np.testing.assert_allclose(y, EXPECTED, rtol=1e-6)
    assert _placed(sess) == {"CPUExecutionProvider"}


def test_no_device_at_all_runs_on_cpu(monkeypatch):
    """A machine with no usable OpenCL device: the provider claims nothing, with a warning."""
    def none():
        raise DeviceError("no usable OpenCL device (injected)")

    monkeypatch.setattr(_device, "default_device", none)
    with pytest.warns(RuntimeWarning, match="unavailable.*injected"):
        sess = ml.InferenceSession(_model(), providers=OPENCL)
    assert _placed(sess) == {"CPUExecutionProvider"}
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)
