"""OrtValue and IOBinding: values on the OpenCL device stay there between runs."""

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import mlrt
import mlrt.lowlevel as ml
from opencl_check import opencl_device

OPENCL = ["OpenCLExecutionProvider", "CPUExecutionProvider"]


def _model(ops=("Relu", "Sigmoid")):
    names = ["x"] + [f"t{i}" for i in range(len(ops) - 1)] + ["y"]
    nodes = [h.make_node(op, [a], [b], name=f"n{i}") for i, (op, a, b) in enumerate(zip(ops, names, names[1:]))]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [2, 3])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


def _expected(x):
    return 1 / (1 + np.exp(-np.maximum(x, 0)))


def test_ortvalue_round_trip():
    opencl_device()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = ml.OrtValue.ortvalue_from_numpy(x, "opencl", 0)
    assert v.device_name() == "opencl" and v.shape() == [2, 3] and v.data_type() == "tensor(float)"
    np.testing.assert_array_equal(v.numpy(), x)
    v.update_inplace(x * 2)
    np.testing.assert_array_equal(v.numpy(), x * 2)
    c = ml.OrtValue.ortvalue_from_numpy(x)
    assert c.device_name() == "cpu" and c.numpy() is not None
    with pytest.raises(mlrt.InvalidArgument, match="device_type"):
        ml.OrtValue.ortvalue_from_numpy(x, "tpu")


def test_device_inputs_and_outputs_stay_on_the_device(monkeypatch):
    opencl_device()
    from mlrt.native.opencl._memory import DeviceTensor
    sess = ml.InferenceSession(_model(), providers=OPENCL)
    assert {p for _, op, p in sess.get_node_assignment() if not op.startswith("Memcpy")} == {OPENCL[0]}
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    binding = sess.io_binding()
    binding.bind_ortvalue_input("x", ml.OrtValue.ortvalue_from_numpy(x, "opencl", 0))
    binding.bind_output("y", "opencl")
    reads = []
    original = DeviceTensor.numpy
    monkeypatch.setattr(DeviceTensor, "numpy", lambda self: reads.append(self) or original(self))
    sess.run_with_iobinding(binding)
    (y,) = binding.get_outputs()
    assert y.device_name() == "opencl" and isinstance(y._value, DeviceTensor)
    assert reads == []  # nothing came back to the host during the run
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], _expected(x), rtol=1e-6)
    # the output can feed the next run without leaving the device
    binding.bind_ortvalue_input("x", y)
    reads.clear()
    sess.run_with_iobinding(binding)
    assert len(reads) == 0
    np.testing.assert_allclose(binding.get_outputs()[0].numpy(), _expected(_expected(x)), rtol=1e-6)


def test_bound_output_value_is_filled_and_cpu_inputs_work():
    opencl_device()
    sess = ml.InferenceSession(_model(), providers=OPENCL)
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    out = ml.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "opencl", 0)
    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_ortvalue_output("y", out)
    sess.run_with_iobinding(binding)
    assert binding.get_outputs()[0] is out
    np.testing.assert_allclose(out.numpy(), _expected(x), rtol=1e-6)
    host = ml.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    binding.bind_ortvalue_output("y", host)
    sess.run_with_iobinding(binding)
    np.testing.assert_allclose(host.numpy(), _expected(x), rtol=1e-6)


def test_device_value_into_cpu_session_and_bad_binding():
    opencl_device()
    sess = ml.InferenceSession(_model(("Neg",)))  # CPU only: the device input is read back
    x = np.ones((2, 3), np.float32)
    (y,) = sess.run(None, {"x": ml.OrtValue.ortvalue_from_numpy(x, "opencl", 0)})
    np.testing.assert_array_equal(y, -x)
    with pytest.raises(mlrt.InvalidArgument, match="dimension 0"):
        sess.run(None, {"x": ml.OrtValue.ortvalue_from_numpy(np.ones((3, 3), np.float32), "opencl", 0)})
    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_ortvalue_output("y", ml.OrtValue.ortvalue_from_shape_and_type([5], np.float32))
    with pytest.raises(mlrt.InvalidArgument, match="bound"):
        sess.run_with_iobinding(binding)
    assert sess.run(None, {"x": x})[0].shape == (2, 3)  # still usable


def test_bad_values_and_bindings_are_named():
    opencl_device()
    with pytest.raises(mlrt.InvalidArgument, match="cannot live on the OpenCL device"):
        ml.OrtValue.ortvalue_from_numpy(np.array(["a", "b"]), "opencl", 0)
    with pytest.raises(mlrt.InvalidArgument, match="negative dimension"):
        ml.OrtValue.ortvalue_from_shape_and_type([2, -1], np.float32, "opencl", 0)
    with pytest.raises(mlrt.InvalidArgument, match="not an element type"):
        ml.OrtValue.ortvalue_from_shape_and_type([2], "nope")
    binding = ml.InferenceSession(_model(), providers=OPENCL).io_binding()
    with pytest.raises(mlrt.InvalidArgument, match="expected an OrtValue"):
        binding.bind_ortvalue_input("x", np.ones((2, 3), np.float32))
