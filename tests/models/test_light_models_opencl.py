"""The nine light models with providers ["OpenCLExecutionProvider", "CPUExecutionProvider"]:
every output matches the stored expected output (rtol 1e-3, atol 1e-4), and at
least 90% of the models' nodes run on OpenCL.  A model holding an operator the
OpenCL provider lacks runs across both providers with a memcpy at each boundary."""

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import mlrt.lowlevel as ml
from opencl_check import opencl_device
from test_light_models import LIGHT, MODELS

OPENCL = ["OpenCLExecutionProvider", "CPUExecutionProvider"]
_placed: dict[str, tuple[int, int]] = {}


@pytest.mark.parametrize("name", MODELS)
def test_light_model_on_opencl(name):
    opencl_device()
    sess = ml.InferenceSession(str(LIGHT / f"light_{name}.onnx"), providers=OPENCL)
    (inp,) = sess.get_inputs()
    (got,) = sess.run(None, {inp.name: np.ones(inp.shape, np.float32)})
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    rows = [r for r in sess.get_node_assignment() if not r[1].startswith("Memcpy")]
    _placed[name] = (sum(r[2] == OPENCL[0] for r in rows), len(rows))


def test_at_least_90_percent_of_nodes_on_opencl():
    opencl_device()
    missing = [n for n in MODELS if n not in _placed]
    for name in missing:  # when run alone
        test_light_model_on_opencl(name)
    on, total = map(sum, zip(*_placed.values()))
    assert on / total >= 0.9, f"{on}/{total} nodes on OpenCL: {_placed}"


def test_operator_without_opencl_kernel_runs_across_both_providers():
    """SqueezeNet with a MeanVarianceNormalization (no OpenCL recorder) spliced in after
    its first fire module: OpenCL -> CPU -> OpenCL, checked against onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    opencl_device()
    model = onnx.load(str(LIGHT / "light_squeezenet.onnx"))
    g = model.graph
    k = next(i for i, n in enumerate(g.node) if n.op_type == "Concat")
    cat = g.node[k].output[0]
    for n in g.node[k + 1:]:
        n.input[:] = ["mvn_out" if x == cat else x for x in n.input]
    g.node.insert(k + 1, helper.make_node("MeanVarianceNormalization", [cat], ["mvn_out"], name="mvn"))
    data = model.SerializeToString()

    sess = ml.InferenceSession(data, providers=OPENCL)
    where = {n: p for n, _, p in sess.get_node_assignment()}
    assert where["mvn"] == "CPUExecutionProvider"
    memcpys = sorted(op for _, op, _ in sess.get_node_assignment() if op.startswith("Memcpy"))
    assert memcpys.count("MemcpyToHost") == 1 and memcpys.count("MemcpyFromHost") == 2, memcpys
    x = np.random.default_rng(0).standard_normal(sess.get_inputs()[0].shape).astype(np.float32)
    (got,) = sess.run(None, {"data_0": x})
    so = ort.SessionOptions()
    so.log_severity_level = 3
    (want,) = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"]).run(None, {"data_0": x})
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
    (cpu,) = ml.InferenceSession(data).run(None, {"data_0": x})
    np.testing.assert_allclose(got, cpu, rtol=1e-4, atol=1e-6)


def _random_weights(model, dtype):
    """SqueezeNet with He-initialised random weights in place of its ConstantOfShape
    ones (every class would score alike), its Softmax dropped so the logits are
    compared, and every float tensor of type `dtype`."""
    rng = np.random.default_rng(5)
    g = model.graph
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    def random(shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 0
        return (rng.standard_normal(shape) * (np.sqrt(2.0 / fan_in) if fan_in else 0.1)).astype(dtype)

    tensors = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for node in [n for n in g.node if n.op_type == "ConstantOfShape"]:  # weights made at run time
        tensors[node.output[0]] = np.zeros(tuple(int(d) for d in tensors[node.input[0]]), np.float32)
        g.node.remove(node)
        if node.output[0] not in {v.name for v in g.input}:  # IR 3: initializers are inputs too
            g.input.append(helper.make_tensor_value_info(node.output[0], elem, tensors[node.output[0]].shape))
    del g.initializer[:]
    g.initializer.extend(numpy_helper.from_array(random(a.shape) if a.dtype == np.float32 else a, name)
                         for name, a in tensors.items())
    (softmax,) = [n for n in g.node if n.op_type == "Softmax"]
    g.node.remove(softmax)
    g.output[0].name = softmax.input[0]
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            v.type.tensor_type.elem_type = elem
    del g.value_info[:]
    return model.SerializeToString()


def test_float16_network_on_opencl():
    """The same random-weight SqueezeNet in float32 and in float16: float16 on OpenCL
    (stored as half, computed in float) stays within half precision of float32, and
    every node of it runs on OpenCL."""
    opencl_device()
    f32 = _random_weights(onnx.load(str(LIGHT / "light_squeezenet.onnx")), np.float32)
    f16 = _random_weights(onnx.load(str(LIGHT / "light_squeezenet.onnx")), np.float16)
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (want,) = ml.InferenceSession(f32).run(None, {"data_0": x})
    sess = ml.InferenceSession(f16, providers=OPENCL)
    assert {p for _, op, p in sess.get_node_assignment() if not op.startswith("Memcpy")} == {OPENCL[0]}
    (got,) = sess.run(None, {"data_0": x.astype(np.float16)})
    assert got.dtype == np.float16 and got.shape == want.shape
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=0, atol=5e-3 * scale)
    (on_cpu,) = ml.InferenceSession(f16).run(None, {"data_0": x.astype(np.float16)})
    np.testing.assert_allclose(got.astype(np.float32), on_cpu.astype(np.float32), rtol=0, atol=5e-3 * scale)
    (f32_cl,) = ml.InferenceSession(f32, providers=OPENCL).run(None, {"data_0": x})
    np.testing.assert_allclose(f32_cl, want, rtol=1e-3, atol=1e-4 * scale)
