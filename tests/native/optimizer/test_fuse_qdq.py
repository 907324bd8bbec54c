"""The QDQ fusions (native/optimizer/fuse_qdq_*.py, drop_qdq_moves.py): at the extended
level DequantizeLinear -> Conv / Add / Gemm / MatMul / GlobalAveragePool -> QuantizeLinear
become QLinearConv / QLinearAdd / QGemm / QLinearMatMul / QLinearGlobalAveragePool, and
Flatten, Reshape, Transpose, MaxPool between a DequantizeLinear and a QuantizeLinear of
the same parameters run on the quantized values; the outputs are then onnxruntime's bit
for bit (it fuses the same way at its extended level); at the basic level nothing is
fused and the float graph runs as written.  What must not fuse (a shared Conv output, a
bias of another scale, weights that are graph inputs, mixed types, another beta, moves
between other scales or zero points) stays."""

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


def _quantized(tmp_path, model, feeds, per_channel, activation, spread=1.5):
    """onnxruntime.quantization's QDQ model of `model` (int8 weights), calibrated on four
    normal samples of feeds' shapes times `spread`."""
    import onnx
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(model, src)
    samples = iter([{k: (rng.standard_normal(v.shape) * spread).astype(np.float32) for k, v in feeds.items()}
                    for _ in range(4)])

    class Reader(quantization.CalibrationDataReader):
        def get_next(self):
            return next(samples, None)

    quantization.quantize_static(str(src), str(dst), Reader(), quant_format=quantization.QuantFormat.QDQ,
                                 per_channel=per_channel, activation_type=activation,
                                 weight_type=quantization.QuantType.QInt8)
    return onnx.load(dst)


def qdq_model(tmp_path, per_channel, activation):
    return _quantized(tmp_path, float_cnn(), {"x": np.zeros((1, 3, 13, 13), np.float32)}, per_channel, activation,
                      spread=1.0)


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


# -- the rest of a CNN and a transformer's products: QGemm, QLinearGlobalAveragePool,
# QLinearMatMul, and the moves / MaxPool on quantized values (fuse_qdq_gemm.py,
# fuse_qdq_pool.py, fuse_qdq_matmul.py, drop_qdq_moves.py) ------------------------------------

def float_head():
    """Conv + Relu, MaxPool, Conv, GlobalAveragePool, Flatten, Gemm (transB, bias): a CNN's
    stem and classifier."""
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in (("w0", (8, 3, 3, 3)), ("w1", (16, 8, 3, 3)), ("wg", (10, 16)), ("bg", (10,)))]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c0"], ["r0"]),
             helper.make_node("MaxPool", ["r0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p0", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c1"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], transB=1)]
    g = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 15, 15])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), {"x": np.zeros((1, 3, 15, 15), np.float32)}


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_qdq_head_fused_as_onnxruntime(tmp_path, per_channel, activation):
    model, feeds = float_head()
    model = _quantized(tmp_path, model, feeds, per_channel, getattr(quantization.QuantType, activation))
    fused = mlrt_session(model, ALL)
    ops = [op for _, op, _ in fused.get_node_assignment()]
    assert "QGemm" in ops and "QLinearGlobalAveragePool" in ops and "Gemm" not in ops, ops
    assert "GlobalAveragePool" not in ops and ops.count("DequantizeLinear") == 1, ops  # (the output's only)
    for _ in range(4):
        feeds = {"x": (rng.standard_normal((1, 3, 15, 15)) * 1.5).astype(np.float32)}
        want = ort_run(model, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)[0]
        np.testing.assert_array_equal(fused.run(None, feeds)[0], want)


def float_attention():
    """x @ Wq, x @ Wk, their product (activation by activation), then @ Wo."""
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in (("wq", (16, 8)), ("wk", (16, 8)), ("wo", (5, 7)))]
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"]),
             helper.make_node("MatMul", ["x", "wk"], ["k"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("MatMul", ["s", "wo"], ["y"])]
    g = helper.make_graph(nodes, "attn", [helper.make_tensor_value_info("x", T.FLOAT, [2, 5, 16])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), {"x": np.zeros((2, 5, 16), np.float32)}


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_qdq_matmul_fused_as_onnxruntime(tmp_path, per_channel, activation):
    model, feeds = float_attention()
    model = _quantized(tmp_path, model, feeds, per_channel, getattr(quantization.QuantType, activation))
    fused = mlrt_session(model, ALL)
    ops = [op for _, op, _ in fused.get_node_assignment()]
    assert ops.count("QLinearMatMul") == 4 and "MatMul" not in ops, ops
    for _ in range(4):
        feeds = {"x": (rng.standard_normal((2, 5, 16)) * 1.5).astype(np.float32)}
        want = ort_run(model, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)[0]
        np.testing.assert_array_equal(fused.run(None, feeds)[0], want)


def _qdq_around(op, attrs, x_shape, scales=(0.1, 0.1), zps=(3, 3), extra=()):
    """xq (uint8) -DQ(s0, z0)-> op -Q(s1, z1)-> y, by hand."""
    inits = {"s0": np.float32(scales[0]), "z0": np.uint8(zps[0]), "s1": np.float32(scales[1]), "z1": np.uint8(zps[1]),
             **dict(extra)}
    nodes = [helper.make_node("DequantizeLinear", ["xq", "s0", "z0"], ["x"]),
             helper.make_node(op, ["x", *[k for k, _ in extra]], ["m"], **attrs),
             helper.make_node("QuantizeLinear", ["m", "s1", "z1"], ["y"])]
    g = helper.make_graph(nodes, "moved", [helper.make_tensor_value_info("xq", T.UINT8, list(x_shape))],
                          [helper.make_tensor_value_info("y", T.UINT8, None)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), \
        {"xq": rng.integers(0, 256, x_shape).astype(np.uint8)}


@pytest.mark.parametrize("op,attrs,shape,extra", [
    ("Flatten", {}, (2, 3, 4), ()),
    ("Transpose", {"perm": [2, 0, 1]}, (2, 3, 4), ()),
    ("Reshape", {}, (2, 3, 4), (("shape", np.array([4, 6], np.int64)),)),
    ("MaxPool", {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]}, (1, 2, 5, 5), ()),
])
def test_qdq_moves_on_quantized_values(op, attrs, shape, extra):
    model, feeds = _qdq_around(op, attrs, shape, extra=extra)
    sess = mlrt_session(model, ALL)
    assert [o for _, o, _ in sess.get_node_assignment()] == [op]
    want = mlrt_session(model, ml.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)[0]
    np.testing.assert_array_equal(sess.run(None, feeds)[0], want)
    np.testing.assert_array_equal(want, ort_run(model, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)[0])


@pytest.mark.parametrize("scales,zps", [((0.1, 0.2), (3, 3)), ((0.1, 0.1), (3, 4)), ((-0.1, -0.1), (3, 3))])
def test_qdq_moves_of_other_parameters_stay(scales, zps):
    model, feeds = _qdq_around("MaxPool", {"kernel_shape": [2, 2]}, (1, 2, 5, 5), scales, zps)
    sess = mlrt_session(model, ALL)
    assert [o for _, o, _ in sess.get_node_assignment()] == ["DequantizeLinear", "MaxPool", "QuantizeLinear"]
    want = mlrt_session(model, ml.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)[0]
    np.testing.assert_array_equal(sess.run(None, feeds)[0], want)


def test_qdq_gemm_of_another_beta_stays():
    w = rng.integers(-127, 127, (6, 4)).astype(np.int8)
    inits = {"xs": np.float32(0.05), "xz": np.uint8(128), "wq": w, "ws": np.float32(0.02), "wz": np.int8(0),
             "bq": rng.integers(-300, 300, 6).astype(np.int32), "bs": np.float32(0.05 * 0.02), "bz": np.int32(0),
             "ys": np.float32(0.3), "yz": np.uint8(7)}
    nodes = [helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["x"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"]),
             helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["b"]),
             helper.make_node("Gemm", ["x", "w", "b"], ["c"], transB=1, beta=0.5),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "gemm", [helper.make_tensor_value_info("xq", T.UINT8, [3, 4])],
                          [helper.make_tensor_value_info("y", T.UINT8, None)],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"xq": rng.integers(0, 256, (3, 4)).astype(np.uint8)}
    sess = mlrt_session(model, ALL)
    assert "QGemm" not in [o for _, o, _ in sess.get_node_assignment()]
    want = mlrt_session(model, ml.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)[0]
    np.testing.assert_array_equal(sess.run(None, feeds)[0], want)
