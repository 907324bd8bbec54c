"""The QDQ fusions (native/optimizer/fuse_qdq_conv.py, fuse_qdq_add.py): at the extended
level DequantizeLinear -> Conv / Add -> QuantizeLinear become QLinearConv / QLinearAdd,
and the outputs are then onnxruntime's bit for bit (it fuses the same way at its
extended level); at the basic level nothing is fused and the float graph runs as
written.  What must not fuse (a shared Conv output, a bias of another scale, weights
that are graph inputs, mixed types) stays."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt.lowlevel as ml

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle of the fused QDQ graphs")
quantization = pytest.importorskip("onnxruntime.quantization", reason="QDQ models come from onnxruntime.quantization")

rng = np.random.default_rng(7)
ALL, BASIC = ml.GraphOptimizationLevel.ORT_ENABLE_ALL, ml.GraphOptimizationLevel.ORT_ENABLE_BASIC


def float_cnn():
    """Conv (3 x 3, pads) + Relu, a depthwise Conv, a strided 1 x 1 Conv, a residual Add."""
    def w(*shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), f"w{len(inits)}")

    inits = []
    inits.append(w(8, 3, 3, 3))
    inits.append(numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "b0"))
    inits.append(w(8, 1, 3, 3))
    inits.append(w(8, 8, 1, 1))
    nodes = [helper.make_node("Conv", ["x", inits[0].name, "b0"], ["c0"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"]),
             helper.make_node("Conv", ["r0", inits[2].name], ["c1"], pads=[1, 1, 1, 1], group=8),
             helper.make_node("Add", ["r0", "c1"], ["a0"]),
             helper.make_node("Conv", ["a0", inits[3].name], ["y"], strides=[2, 2])]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 13, 13])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def qdq_model(tmp_path, per_channel, activation):
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    import onnx
    onnx.save(float_cnn(), src)
    samples = iter([{"x": rng.standard_normal((1, 3, 13, 13)).astype(np.float32)} for _ in range(4)])

    class Reader(quantization.CalibrationDataReader):
        def get_next(self):
            return next(samples, None)

    quantization.quantize_static(str(src), str(dst), Reader(), quant_format=quantization.QuantFormat.QDQ,
                                 per_channel=per_channel, activation_type=activation,
                                 weight_type=quantization.QuantType.QInt8)
    return onnx.load(dst)


def mlrt_session(model, level):
    so = ml.SessionOptions()
    so.graph_optimization_level = level
    return ml.InferenceSession(model.SerializeToString(), so)


def ort_run(model, feeds, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_qdq_fused_as_onnxruntime(tmp_path, per_channel, activation):
    model = qdq_model(tmp_path, per_channel, getattr(quantization.QuantType, activation))
    fused = mlrt_session(model, ALL)
    ops = [op for _, op, _ in fused.get_node_assignment()]
    assert ops.count("QLinearConv") == 3 and "Conv" not in ops and "QLinearAdd" in ops and "Add" not in ops, ops
    for _ in range(4):
        feeds = {"x": (rng.standard_normal((1, 3, 13, 13)) * 1.5).astype(np.float32)}
        want = ort_run(model, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)[0]
        np.testing.assert_array_equal(fused.run(None, feeds)[0], want)


def test_basic_level_runs_the_float_graph(tmp_path):
    model = qdq_model(tmp_path, False, quantization.QuantType.QUInt8)
    basic = mlrt_session(model, BASIC)
    ops = [op for _, op, _ in basic.get_node_assignment()]
    assert "QLinearConv" not in ops and "QLinearAdd" not in ops and "Conv" in ops, ops
    feeds = {"x": rng.standard_normal((1, 3, 13, 13)).astype(np.float32)}
    want = ort_run(model, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)[0]
    np.testing.assert_allclose(basic.run(None, feeds)[0], want, rtol=1e-5, atol=1e-6)


def _qdq_conv(w_input=False, bias_scale=None, extra_reader=False, y_type=T.UINT8):
    """x (uint8) -DQ-> Conv(DQ(w int8)[, DQ(b int32)]) -Q-> y, by hand."""
    w = rng.integers(-127, 127, (4, 3, 3, 3)).astype(np.int8)
    inits = {"xs": np.float32(0.05), "xz": np.uint8(128), "ws": np.float32(0.02), "wz": np.int8(0),
             "bq": rng.integers(-300, 300, 4).astype(np.int32), "bs": np.float32(bias_scale or 0.05 * 0.02),
             "bz": np.int32(0), "ys": np.float32(0.3), "yz": np.array(7, np.uint8 if y_type == T.UINT8 else np.int8)}
    if not w_input:
        inits["wq"] = w
    nodes = [helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["x"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"]),
             helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["b"]),
             helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"])]
    outs = [helper.make_tensor_value_info("y", y_type, None)]
    if extra_reader:
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        outs.append(helper.make_tensor_value_info("r", T.FLOAT, None))
    ins = [helper.make_tensor_value_info("xq", T.UINT8, [1, 3, 6, 6])]
    if w_input:
        ins.append(helper.make_tensor_value_info("wq", T.INT8, [4, 3, 3, 3]))
    g = helper.make_graph(nodes, "qdq", ins, outs, [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    feeds = {"xq": rng.integers(0, 255, (1, 3, 6, 6)).astype(np.uint8)}
    if w_input:
        feeds["wq"] = w
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), feeds


def test_hand_written_qdq_conv_fused():
    model, feeds = _qdq_conv()
    sess = mlrt_session(model, ALL)
    assert [op for _, op, _ in sess.get_node_assignment()] == ["QLinearConv"]
    np.testing.assert_array_equal(sess.run(None, feeds)[0],
                                  ort_run(model, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)[0])


@pytest.mark.parametrize("case", [dict(w_input=True), dict(bias_scale=0.0011), dict(extra_reader=True)])
def test_qdq_conv_not_fused(case):
    model, feeds = _qdq_conv(**case)
    sess = mlrt_session(model, ALL)
    ops = [op for _, op, _ in sess.get_node_assignment()]
    assert "QLinearConv" not in ops and "Conv" in ops, ops
    unfused = mlrt_session(model, ml.GraphOptimizationLevel.ORT_DISABLE_ALL)
    for got, want in zip(sess.run(None, feeds), unfused.run(None, feeds)):
        np.testing.assert_array_equal(got, want)


def test_qdq_add_of_mixed_types_not_fused():
    a = helper.make_node("DequantizeLinear", ["aq", "s", "za"], ["a"])
    b = helper.make_node("DequantizeLinear", ["bq", "s", "zb"], ["b"])
    add = helper.make_node("Add", ["a", "b"], ["c"])
    q = helper.make_node("QuantizeLinear", ["c", "s", "za"], ["y"])
    inits = [numpy_helper.from_array(np.asarray(v), k)
             for k, v in {"s": np.float32(0.1), "za": np.uint8(3), "zb": np.int8(-3)}.items()]
    g = helper.make_graph([a, b, add, q], "add", [helper.make_tensor_value_info("aq", T.UINT8, [5]),
                                                  helper.make_tensor_value_info("bq", T.INT8, [5])],
                          [helper.make_tensor_value_info("y", T.UINT8, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    assert "QLinearAdd" not in [op for _, op, _ in mlrt_session(model, ALL).get_node_assignment()]
