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
    """SqueezeNet with a MeanVarianceNormalization (no OpenCL launcher) spliced in after
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
