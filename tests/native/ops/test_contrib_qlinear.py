"""com.microsoft quantized contrib operators (as onnxruntime's): QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearConcat, QLinearConv
(channels_last) and NhwcConv.  Each is a one-node model run by mlrt and by onnxruntime
(CPU, graph optimizations off), scales and zero points as initializers, compared within
the op's tolerance (`Op.tolerance`: one unit of the quantized type).  onnxruntime runs
NhwcConv only on GPUs, so its oracle is onnxruntime's Conv on transposed tensors.  Last,
a small float CNN quantized by onnxruntime.quantization (QOperator format)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
from tests.oracle import run_mlrt, tolerance

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
rng = np.random.default_rng(21)
SIZES = (1, 13, 127)
EIGHT = (np.uint8, np.int8)


def _model(op_type, inputs, attrs=None, domain=MS):
    """inputs: (array, constant) pairs, None for an absent optional input; constants become initializers."""
    names, g_in, inits, feeds = [], [], [], []
    for i, item in enumerate(inputs):
        if item is None:
            names.append("")
            continue
        a, const = item
        name = f"x{i}"
        names.append(name)
        if const:
            inits.append(numpy_helper.from_array(np.asarray(a), name))
        else:
            g_in.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape))
            feeds.append(a)
    node = helper.make_node(op_type, names, ["y"], domain=domain, **(attrs or {}))
    graph = helper.make_graph([node], f"{op_type}_test", g_in, [helper.make_empty_tensor_value_info("y")],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    return model, feeds


def _run_ort(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), feeds)})


def _assert_close(op_type, got, want):
    _, atol = tolerance(op_type, 1, MS)
    assert got.dtype == want.dtype and got.shape == want.shape, (op_type, got.dtype, got.shape, want.dtype, want.shape)
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.size == 0 or diff.max() <= atol, (op_type, int(diff.max()), int((diff > 0).sum()))
    return diff


def check(op_type, inputs, attrs=None):
    model, feeds = _model(op_type, inputs, attrs)
    got, want = run_mlrt(model, feeds)[0], _run_ort(model, feeds)[0]
    _assert_close(op_type, got, want)
    return got, want


def _q(shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape, dtype=np.int64).astype(dtype)


def _scale(lo=0.005, hi=0.2):
    return np.array(rng.uniform(lo, hi), np.float32)


def _zp(dtype):
    return np.array(rng.integers(-20, 20) if dtype == np.int8 else rng.integers(100, 150), dtype)


def _all_values(dtype):
    return np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)


# -- QLinearAdd / QLinearMul ----------------------------------------------------------------------

SHAPES = [((2, 3, "n"), (2, 3, "n")), ((2, 3, "n"), ("n",)), ((2, 1, "n"), (1, 3, 1)), ((), (4, "n")),
          ((1, "n"), (5, 1))]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shapes", SHAPES)
def test_add_mul(op, dtype, n, shapes):
    sa, sb = (tuple(n if d == "n" else d for d in s) for s in shapes)
    a, b = _q(sa, dtype), _q(sb, dtype)
    check(op, [(a, False), (_scale(), True), (_zp(dtype), True), (b, False), (_scale(), True), (_zp(dtype), True),
               (_scale(0.01, 0.3), True), (_zp(dtype), True)])


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", EIGHT)
def test_add_mul_saturation_and_all_values(op, dtype):
    """Every pair of byte values, with scales that push results past both ends."""
    v = _all_values(dtype)
    a, b = v.reshape(-1, 1), v.reshape(1, -1)
    for c_scale in (0.002, 0.05, 1.0):
        got, _ = check(op, [(a, False), (np.array(0.1, np.float32), True), (_zp(dtype), True), (b, False),
                            (np.array(0.07, np.float32), True), (_zp(dtype), True),
                            (np.array(c_scale, np.float32), True), (_zp(dtype), True)])
    info = np.iinfo(dtype)
    assert got.min() >= info.min and got.max() <= info.max
    one, zero = np.array(1.0, np.float32), np.array(0, dtype)
    sat, _ = check(op, [(a, False), (one, True), (zero, True), (b, False), (one, True), (zero, True),
                        (np.array(1e-3, np.float32), True), (zero, True)])
    assert sat.min() == info.min and sat.max() == info.max
    # absent zero points are 0 (onnxruntime's type inference refuses them: mlrt alone)
    model, feeds = _model(op, [(a, False), (one, True), None, (b, False), (one, True), None,
                               (np.array(1e-3, np.float32), True), None])
    np.testing.assert_array_equal(run_mlrt(model, feeds)[0], sat)


# -- QLinearSigmoid / QLinearLeakyRelu ------------------------------------------------------------

@pytest.mark.parametrize("op,attrs", [("QLinearSigmoid", None), ("QLinearLeakyRelu", None),
                                      ("QLinearLeakyRelu", {"alpha": 0.3})])
@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("n", SIZES)
def test_lookup_ops(op, attrs, dtype, n):
    x = _q((3, n), dtype)
    check(op, [(x, False), (_scale(0.01, 0.1), True), (_zp(dtype), True), (_scale(0.002, 0.02), True),
               (_zp(dtype), True)], attrs)


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("dtype", EIGHT)
def test_lookup_every_value_and_saturation(op, dtype):
    x = _all_values(dtype)
    for xs, ys in ((0.05, 1 / 256), (0.1, 1e-3), (1.0, 0.5), (1e-3, 1e-4)):
        check(op, [(x, False), (np.array(xs, np.float32), True), (_zp(dtype), True), (np.array(ys, np.float32), True),
                   (_zp(dtype), True)])
    xs, ys, zero = np.array(0.05, np.float32), np.array(0.004, np.float32), np.array(0, dtype)
    want, _ = check(op, [(x, False), (xs, True), (zero, True), (ys, True), (zero, True)])
    model, feeds = _model(op, [(x, False), (xs, True), None, (ys, True), None])  # absent zero points: mlrt alone
    np.testing.assert_array_equal(run_mlrt(model, feeds)[0], want)


# -- QLinearGlobalAveragePool ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 13, 5, 7), (1, 127, 3, 3), (2, 3, 13), (1, 4, 2, 3, 5),
                                   (1, 2, 64, 64)])
def test_global_average_pool(dtype, channels_last, shape):
    x = _q(shape, dtype)
    got, _ = check("QLinearGlobalAveragePool", [(x, False), (_scale(), True), (_zp(dtype), True), (_scale(), True),
                                                (_zp(dtype), True)], {"channels_last": channels_last})
    assert got.shape == ((shape[0],) + (1,) * (len(shape) - 2) + (shape[-1],) if channels_last
                         else shape[:2] + (1,) * (len(shape) - 2))


def test_global_average_pool_saturation():
    for dtype in EIGHT:
        x = np.full((1, 3, 4, 4), np.iinfo(dtype).max, dtype)
        got, _ = check("QLinearGlobalAveragePool", [(x, False), (np.array(1.0, np.float32), True),
                                                    (np.array(0, dtype), True), (np.array(0.01, np.float32), True),
                                                    (np.array(0, dtype), True)])
        assert (got == np.iinfo(dtype).max).all()


# -- QLinearConcat ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(dtype, n, axis):
    y_s, y_z = _scale(), _zp(dtype)
    ins = [(y_s, True), (y_z, True)]
    for k, extent in enumerate((1, n, 3)):
        shape = [2, 3, n]
        shape[axis] = extent
        same = k == 1  # one piece shares Y's scale and zero point: copied
        ins += [(_q(tuple(shape), dtype), False), (y_s if same else _scale(), True), (y_z if same else _zp(dtype), True)]
    check("QLinearConcat", ins, {"axis": axis})


def test_concat_saturation():
    for dtype in EIGHT:
        x = _all_values(dtype).reshape(1, -1)
        check("QLinearConcat", [(np.array(0.01, np.float32), True), (_zp(dtype), True), (x, False),
                                (np.array(0.5, np.float32), True), (_zp(dtype), True), (x, False),
                                (np.array(0.001, np.float32), True), (_zp(dtype), True)], {"axis": 0})


# -- QLinearConv (com.microsoft, channels_last) -------------------------------------------------------

CONV_CASES = [
    dict(x=(1, 3, 7, 7), w=(4, 3, 3, 3), attrs={"pads": [1, 1, 1, 1]}),
    dict(x=(2, 4, 13, 5), w=(6, 2, 3, 1), attrs={"group": 2, "strides": [2, 1]}),
    dict(x=(1, 8, 9, 9), w=(8, 1, 3, 3), attrs={"group": 8, "dilations": [2, 2], "pads": [2, 1, 2, 3]}),
    dict(x=(1, 127, 1, 1), w=(13, 127, 1, 1), attrs={}),
]


@pytest.mark.parametrize("types", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("bias", [False, True])
def test_qlinearconv_ms(types, case, channels_last, bias):
    xt, wt = types
    c = CONV_CASES[case]
    m = c["w"][0]
    x, w = _q(c["x"], xt), _q(c["w"], wt)
    if channels_last:
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    w_s = (rng.uniform(0.001, 0.01, m).astype(np.float32) if case % 2 else np.array(0.004, np.float32))
    w_z = np.zeros(w_s.shape, wt) if wt == np.int8 else np.full(w_s.shape, 120, wt)
    ins = [(x, False), (_scale(0.01, 0.05), True), (_zp(xt), True), (w, True), (w_s, True), (w_z, True),
           (_scale(0.05, 0.3), True), (_zp(xt), True)]
    if bias:
        ins.append((rng.integers(-2000, 2000, m).astype(np.int32), True))
    check("QLinearConv", ins, {**c["attrs"], "channels_last": channels_last})


# -- NhwcConv ---------------------------------------------------------------------------------------

NHWC_CASES = [
    dict(x=(1, 7, 7, 1), w=(1, 1, 1, 1), attrs={}),
    dict(x=(1, 3, 3, 1), w=(2, 2, 2, 1), attrs={}, bias=True),
    dict(x=(2, 13, 11, 4), w=(6, 3, 3, 2), attrs={"group": 2, "pads": [1, 0, 1, 2], "strides": [2, 1]}, bias=True),
    dict(x=(1, 9, 9, 8), w=(8, 3, 3, 1), attrs={"group": 8, "dilations": [2, 2], "pads": [0, 2, 1, 1]}),
    dict(x=(1, 6, 7, 3), w=(4, 3, 3, 3), attrs={"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    dict(x=(1, 127, 3), w=(13, 5, 3), attrs={"pads": [2, 2]}, bias=True),
    dict(x=(1, 5, 5, 127), w=(1, 3, 3, 127), attrs={"auto_pad": "SAME_UPPER"}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("case", range(len(NHWC_CASES)))
def test_nhwc_conv(dtype, case):
    c = NHWC_CASES[case]
    x, w = rng.standard_normal(c["x"]).astype(dtype), rng.standard_normal(c["w"]).astype(dtype)
    ins = [(x, False), (w, True)]
    if c.get("bias"):
        ins.append((rng.standard_normal(c["w"][0]).astype(dtype), True))
    model, feeds = _model("NhwcConv", ins, c["attrs"])
    got = run_mlrt(model, feeds)[0]
    ins = [(a.astype(np.float32), k) for a, k in ins] if dtype == np.float16 else ins
    # the oracle: onnxruntime's Conv on the channels-first tensors (float32: it has no double Conv)
    first = [(np.ascontiguousarray(np.moveaxis(a, -1, 1)), k) for a, k in ins[:2]] + ins[2:]
    ref_model, ref_feeds = _model("Conv", [(a.astype(np.float32), k) for a, k in first], c["attrs"], domain="")
    want = np.moveaxis(_run_ort(ref_model, ref_feeds)[0], 1, -1)
    rtol, atol = tolerance("NhwcConv", 1, MS)
    assert got.dtype == dtype and got.shape == want.shape
    if dtype == np.float16:  # computed in float, rounded once to float16
        rtol, atol = 2e-3, 1e-2
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=rtol, atol=atol if dtype == np.float32 else 1e-4)


def test_empty_tensors():
    f, u = np.array(0.1, np.float32), np.array(3, np.uint8)
    x = np.zeros((0, 3, 4), np.uint8)
    for op in ("QLinearSigmoid", "QLinearLeakyRelu"):
        model, feeds = _model(op, [(x, False), (f, True), (u, True), (f, True), (u, True)])
        assert run_mlrt(model, feeds)[0].shape == (0, 3, 4)
    model, feeds = _model("QLinearAdd", [(x, False), (f, True), (u, True), (_q((4,), np.uint8), False), (f, True),
                                         (u, True), (f, True), (u, True)])
    assert run_mlrt(model, feeds)[0].shape == (0, 3, 4)
    model, feeds = _model("QLinearConcat", [(f, True), (u, True), (x, False), (f, True), (u, True),
                                            (np.zeros((0, 3, 2), np.uint8), False), (f, True), (u, True)], {"axis": 2})
    assert run_mlrt(model, feeds)[0].shape == (0, 3, 6)
    model, feeds = _model("NhwcConv", [(np.zeros((0, 5, 5, 3), np.float32), False),
                                       (np.ones((4, 3, 3, 3), np.float32), True)])
    assert run_mlrt(model, feeds)[0].shape == (0, 3, 3, 4)


# -- refusals ---------------------------------------------------------------------------------------

def _fails(op_type, inputs, attrs=None):
    model, feeds = _model(op_type, inputs, attrs)
    with pytest.raises(mlrt.MlrtError) as e:
        run_mlrt(model, feeds)
    return str(e.value)


def test_refusals():
    f, u, s = np.array(0.1, np.float32), np.array(3, np.uint8), np.array(3, np.int8)
    a, b = _q((2, 3), np.uint8), _q((2, 3), np.int8)
    assert "differ" in _fails("QLinearAdd", [(a, False), (f, True), (u, True), (b, False), (f, True), (s, True),
                                             (f, True), (u, True)])
    assert "per tensor" in _fails("QLinearMul", [(a, False), (np.ones(3, np.float32), True), (u, True), (a, False),
                                                 (f, True), (u, True), (f, True), (u, True)])
    assert "broadcast" in _fails("QLinearAdd", [(a, False), (f, True), (u, True), (_q((4,), np.uint8), False),
                                                (f, True), (u, True), (f, True), (u, True)])
    x16 = np.ones((2, 3), np.int16)
    assert "type" in _fails("QLinearSigmoid", [(x16, False), (f, True), None, (f, True), None])
    assert "float" in _fails("QLinearLeakyRelu", [(a, False), (np.array(0.1, np.float64), True), (u, True), (f, True),
                                                  (u, True)])
    assert "rank" in _fails("QLinearGlobalAveragePool", [(a, False), (f, True), (u, True), (f, True), (u, True)])
    assert "differ off axis" in _fails("QLinearConcat", [(f, True), (u, True), (a, False), (f, True), (u, True),
                                                         (_q((3, 3), np.uint8), False), (f, True), (u, True)],
                                       {"axis": 1})
    assert "triples" in _fails("QLinearConcat", [(f, True), (u, True), (a, False), (f, True)], {"axis": 0})
    x = np.ones((1, 5, 5, 3), np.float32)
    assert "channels" in _fails("NhwcConv", [(x, False), (np.ones((2, 3, 3, 4), np.float32), True)])
    xq = np.ones((1, 5, 5, 3), np.uint8)
    assert "channels" in _fails("QLinearConv", [(xq, False), (f, True), (u, True),
                                                (np.ones((2, 4, 3, 3), np.uint8), True), (f, True), (u, True),
                                                (f, True), (u, True)], {"channels_last": 1})


# -- a small CNN quantized by onnxruntime (QOperator format) -------------------------------------------

def _float_cnn():
    def init(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c1"], ["s1"]),
        helper.make_node("Mul", ["c1", "s1"], ["m1"]),
        helper.make_node("Conv", ["m1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "m1"], ["a1"]),
        helper.make_node("LeakyRelu", ["a1"], ["l1"], alpha=0.1),
        helper.make_node("Conv", ["x", "w3", "b3"], ["c3"], strides=[1, 1]),
        helper.make_node("Concat", ["l1", "c3"], ["cat"], axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["y"]),
    ]
    inits = [init("w1", (8, 3, 3, 3)), init("b1", (8,)), init("w2", (8, 8, 3, 3)), init("b2", (8,)),
             init("w3", (5, 3, 1, 1)), init("b3", (5,))]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 13, 13])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("qtype", ["QUInt8", "QInt8"])
def test_quantized_cnn(tmp_path, qtype):
    quantization = pytest.importorskip("onnxruntime.quantization")
    import onnx

    samples = [rng.standard_normal((1, 3, 13, 13)).astype(np.float32) for _ in range(4)]

    class Reader(quantization.CalibrationDataReader):
        def __init__(self):
            self.it = iter({"x": s} for s in samples)

        def get_next(self):
            return next(self.it, None)

    src, dst = tmp_path / "cnn.onnx", tmp_path / "cnn_q.onnx"
    onnx.save(_float_cnn(), src)
    kind = getattr(quantization.QuantType, qtype)
    quantization.quantize_static(str(src), str(dst), Reader(), quant_format=quantization.QuantFormat.QOperator,
                                 activation_type=kind, weight_type=kind)
    model = onnx.load(dst)
    ops = {(n.domain, n.op_type) for n in model.graph.node}
    assert {(MS, "QLinearAdd"), (MS, "QLinearMul"), (MS, "QLinearSigmoid"), (MS, "QLinearLeakyRelu"),
            (MS, "QLinearConcat"), (MS, "QLinearGlobalAveragePool"), ("", "QLinearConv")} <= ops, ops
    y_scale = float(numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == "y_scale")))
    for x in samples[:2] + [rng.standard_normal((1, 3, 13, 13)).astype(np.float32)]:
        got, want = run_mlrt(model, [x])[0], _run_ort(model, [x])[0]
        assert got.dtype == want.dtype and got.shape == want.shape == (1, 13, 1, 1)
        # (within the ops' tolerance: QLinearSigmoid / LeakyRelu tables may differ by a unit)
        np.testing.assert_allclose(got, want, rtol=0, atol=2 * y_scale + 1e-7)
