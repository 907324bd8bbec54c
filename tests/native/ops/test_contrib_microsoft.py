"""com.microsoft contrib operators (as onnxruntime's): Gelu, FastGelu, BiasGelu,
QuickGelu, BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization, FusedMatMul,
FusedGemm, Range (delta optional) and Trilu,
each a one-node model run by mlrt and by onnxruntime (CPU, graph optimizations off so
it runs the op itself), compared within the op's tolerance (`Op.tolerance`)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from tests.oracle import run_mlrt, tolerance

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
rng = np.random.default_rng(12)
SIZES = (1, 13, 127)


def _model(op_type, inputs, attrs=None, outputs=("y0",)):
    in_names = [f"x{i}" if a is not None else "" for i, a in enumerate(inputs)]
    node = helper.make_node(op_type, in_names, list(outputs), domain=MS, **(attrs or {}))
    g_in = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in zip(in_names, inputs) if a is not None]
    g_out = [helper.make_empty_tensor_value_info(n) for n in outputs if n]
    graph = helper.make_graph([node], f"{op_type}_test", g_in, g_out)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def _run_ort(model, inputs):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), [x for x in inputs if x is not None])}
    return sess.run(None, feeds)


def check(op_type, inputs, attrs=None, outputs=("y0",)):
    model = _model(op_type, inputs, attrs, outputs)
    got, want = run_mlrt(model, inputs), _run_ort(model, inputs)
    rtol, atol = tolerance(op_type, 1, MS)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (op_type, g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=op_type)
    return got


def _x(shape, dtype=np.float32, scale=3.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


# -- activations ------------------------------------------------------------------------------

EDGES = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, 30.0, -30.0, 0.5, -2.5, 6.0], np.float32)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("lead", [(), (2,), (2, 3)])
def test_gelu_family(n, lead):
    x, b, s = _x(lead + (n,)), _x((n,)), _x(lead + (n,))
    check("Gelu", [x])
    check("FastGelu", [x])
    check("FastGelu", [x, b])
    check("BiasGelu", [x, b])
    check("QuickGelu", [x])
    check("QuickGelu", [x], {"alpha": 1.0})
    got = run_mlrt(_model("BiasAdd", [x, b, s]), [x, b, s])[0]  # onnxruntime's BiasAdd is CUDA only
    np.testing.assert_allclose(got, x + b + s, rtol=1e-6, atol=1e-6)


def test_activation_edge_values():
    x = EDGES.reshape(1, -1)
    for op in ("Gelu", "FastGelu", "QuickGelu"):
        check(op, [x])
    check("BiasGelu", [x, np.zeros(x.shape[-1], np.float32)])


@pytest.mark.parametrize("op", ["Gelu", "FastGelu", "QuickGelu"])
def test_activation_empty(op):
    x = np.zeros((0, 5), np.float32)
    assert run_mlrt(_model(op, [x]), [x])[0].shape == (0, 5)


def test_activation_double_and_half():
    """float64 and float16 against float32 onnxruntime results (onnxruntime has float32 CPU kernels)."""
    x, b = _x((3, 13)), _x((13,))
    for op, ins, attrs in (("Gelu", [x], None), ("FastGelu", [x, b], None), ("BiasGelu", [x, b], None),
                           ("QuickGelu", [x], {"alpha": 1.5})):
        want = _run_ort(_model(op, ins, attrs), ins)[0]
        d = run_mlrt(_model(op, [i.astype(np.float64) for i in ins], attrs), [i.astype(np.float64) for i in ins])[0]
        np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-5, err_msg=op)
        h = run_mlrt(_model(op, [i.astype(np.float16) for i in ins], attrs), [i.astype(np.float16) for i in ins])[0]
        assert h.dtype == np.float16
        np.testing.assert_allclose(h.astype(np.float32), want, rtol=1e-2, atol=2e-2, err_msg=op)


def test_activation_refusals():
    x = _x((2, 5))
    with pytest.raises(mlrt.MlrtError):  # bias not over the last dim
        run_mlrt(_model("BiasGelu", [x, _x((2,))]), [x, _x((2,))])
    with pytest.raises(mlrt.MlrtError):  # BiasAdd needs skip
        run_mlrt(_model("BiasAdd", [x, _x((5,))]), [x, _x((5,))])
    xi = np.ones((2, 5), np.int32)
    with pytest.raises(mlrt.MlrtError):  # no integer kernel
        run_mlrt(_model("Gelu", [xi]), [xi])


# -- SkipLayerNormalization / SkipSimplifiedLayerNormalization -----------------------------------

ALL_OUT = ("y0", "", "", "y3")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("beta", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_skip_layer_norm(n, beta, bias):
    x, s, g = _x((2, 3, n)), _x((2, 3, n)), _x((n,))
    ins = [x, s, g, _x((n,)) if beta else None, _x((n,)) if bias else None]
    while ins[-1] is None:
        ins.pop()
    check("SkipLayerNormalization", ins, {"epsilon": 1e-5})
    check("SkipLayerNormalization", ins, {"epsilon": 1e-5}, outputs=ALL_OUT)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("bias", [False, True])
def test_skip_simplified_layer_norm(n, bias):
    x, s, g = _x((2, 3, n)), _x((2, 3, n)), _x((n,))
    ins = [x, s, g] + ([_x((n,))] if bias else [])
    check("SkipSimplifiedLayerNormalization", ins, {"epsilon": 1e-6})
    check("SkipSimplifiedLayerNormalization", ins, {"epsilon": 1e-6}, outputs=ALL_OUT)


def test_skip_norm_broadcast_skip_and_stats():
    """skip of the input's last two dims, repeated over the batch; mean / inv_std_var outputs."""
    x, s, g, b = _x((3, 4, 13)), _x((4, 13)), _x((13,)), _x((13,))
    check("SkipLayerNormalization", [x, s, g, b], {"epsilon": 1e-5})
    y, mean, inv, total = run_mlrt(_model("SkipLayerNormalization", [x, s, g, b], {"epsilon": 1e-5},
                                          ("y0", "y1", "y2", "y3")), [x, s, g, b])
    v = (x + s).astype(np.float64)
    np.testing.assert_allclose(total, x + s, rtol=1e-6)
    np.testing.assert_allclose(mean, v.mean(-1, keepdims=True), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(inv, 1 / np.sqrt(v.var(-1, keepdims=True) + 1e-5), rtol=1e-4)
    np.testing.assert_allclose(y, (v - mean) * inv * g + b, rtol=1e-4, atol=1e-4)


def test_skip_norm_edge_values_and_empty():
    x = np.tile(EDGES[:6], (2, 1))
    s, g = np.zeros_like(x), np.ones(x.shape[-1], np.float32)
    for op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization"):
        model = _model(op, [x, s, g])
        got, want = run_mlrt(model, [x, s, g])[0], _run_ort(model, [x, s, g])[0]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        e = np.zeros((0, 4, 8), np.float32)
        assert run_mlrt(_model(op, [e, e, np.ones(8, np.float32)]), [e, e, np.ones(8, np.float32)])[0].shape == e.shape
        xd = _x((2, 7)).astype(np.float64)
        want = _run_ort(_model(op, [x.astype(np.float32) for x in (xd, xd, xd[0])]), [x.astype(np.float32) for x in (xd, xd, xd[0])])
        got = run_mlrt(_model(op, [xd, xd, xd[0]]), [xd, xd, xd[0]])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)


def test_skip_norm_refusals():
    x, g = _x((2, 5)), _x((5,))
    for bad in (_x((2, 4)), _x((3, 5))):
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(_model("SkipLayerNormalization", [x, bad, g]), [x, bad, g])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model("SkipLayerNormalization", [x, x, _x((4,))]), [x, x, _x((4,))])


# -- FusedMatMul / FusedGemm --------------------------------------------------------------------

@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("a_shape,b_shape", [((1, 1), (1, 1)), ((13, 127), (127, 9)), ((2, 3, 13, 4), (4, 13)),
                                             ((3, 1, 5, 7), (2, 7, 13)), ((0, 4), (4, 3)), ((2, 5, 0), (0, 6))])
def test_fused_matmul(trans_a, trans_b, a_shape, b_shape):
    sa = a_shape[:-2] + a_shape[:-3:-1] if trans_a else a_shape
    sb = b_shape[:-2] + b_shape[:-3:-1] if trans_b else b_shape
    a, b = _x(sa, scale=1.0), _x(sb, scale=1.0)
    check("FusedMatMul", [a, b], {"alpha": 0.75, "transA": trans_a, "transB": trans_b})


def test_fused_matmul_1d_double_and_refusals():
    a, b = _x((7,), scale=1.0), _x((7, 5), scale=1.0)
    check("FusedMatMul", [a, b], {"alpha": 2.0})
    want = _run_ort(_model("FusedMatMul", [a, b], {"alpha": 2.0, "transB": 0}), [a, b])[0]
    got = run_mlrt(_model("FusedMatMul", [a.astype(np.float64), b.astype(np.float64)], {"alpha": 2.0}),
                   [a.astype(np.float64), b.astype(np.float64)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model("FusedMatMul", [b, b]), [b, b])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model("FusedMatMul", [b, b], {"transBatchA": 1}), [b, b])


@pytest.mark.parametrize("activation,params", [("Relu", {}), ("LeakyRelu", {"activation_alpha": 0.2}),
                                               ("Sigmoid", {}), ("Tanh", {}),
                                               ("HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.4})])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (13, 127, 9), (4, 13, 127), (0, 3, 5)])
@pytest.mark.parametrize("trans_b", [0, 1])
def test_fused_gemm(activation, params, m, k, n, trans_b):
    a, b, c = _x((m, k), scale=0.5), _x((n, k) if trans_b else (k, n), scale=0.5), _x((n,))
    check("FusedGemm", [a, b, c], {"activation": activation, "alpha": 0.7, "beta": 0.5, "transB": trans_b, **params})
    check("FusedGemm", [a, b], {"activation": activation, "transB": trans_b, **params})


def test_fused_gemm_refusals():
    a = _x((3, 4))
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(_model("FusedGemm", [a, a.T.copy()], {"activation": "Softsign"}), [a, a.T.copy()])
    ad = a.astype(np.float64)
    with pytest.raises(mlrt.MlrtError):  # float32 only, as onnxruntime's
        run_mlrt(_model("FusedGemm", [ad, ad.T.copy()]), [ad, ad.T.copy()])


def test_fused_gemm_constant_b():
    """B an initializer read transposed: the plan hands the kernel B^T made once (Gemm's path)."""
    a, b, c = _x((13, 33), scale=0.5), _x((9, 33), scale=0.5), _x((9,))
    model = _model("FusedGemm", [a, b, c], {"activation": "Relu", "transB": 1})
    model.graph.initializer.append(numpy_helper.from_array(b, "x1"))
    del model.graph.input[1]
    got, want = run_mlrt(model, [a, None, c]), _run_ort(model, [a, c])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-4)


# -- Range / Trilu (com.microsoft versions of the ai.onnx ops) ---------------------------------

RANGE_TYPES = (np.int32, np.int64, np.float32, np.float64)
RANGE_CASES = [(0, 10, 1), (2, 15, 3), (10, 0, -1), (10, -17, -4), (5, 5, 1), (5, 2, 1), (2, 5, -1),
               (-3, 127, 1), (0, 1, 5), (7, 6, -1)]


@pytest.mark.parametrize("dtype", RANGE_TYPES)
@pytest.mark.parametrize("start,limit,delta", RANGE_CASES)
def test_ms_range(dtype, start, limit, delta):
    s, l = np.array(start, dtype), np.array(limit, dtype)
    got = check("Range", [s, l, np.array(delta, dtype)])[0]
    assert got.shape == (len(np.arange(start, limit, delta)),)
    if delta == 1:  # delta absent: 1, given as two inputs or as an empty third input name
        check("Range", [s, l])
        check("Range", [s, l, None])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ms_range_fractional(dtype):
    for start, limit, delta in ((0.5, 3.7, 0.25), (2.5, -3.0, -0.7), (-1.25, 1.0, 0.5), (1.0, 1.0, 0.1),
                                (0.0, -2.0, 0.5)):
        check("Range", [np.array(start, dtype), np.array(limit, dtype), np.array(delta, dtype)])
    check("Range", [np.array(-2.5, dtype), np.array(3.25, dtype)])


def test_ms_range_int16_and_refusals():
    check("Range", [np.array(3, np.int16), np.array(-9, np.int16), np.array(-2, np.int16)])
    check("Range", [np.array(3, np.int16), np.array(9, np.int16)])
    bad = [([np.array(0, np.int32), np.array(5, np.int32), np.array(0, np.int32)]),  # delta 0
           ([np.array(0, np.int32), np.array(5, np.int64)]),  # mixed types
           ([np.array(0, np.float16), np.array(5, np.float16)]),  # not a contrib Range type
           ([np.array([0, 1], np.int32), np.array(5, np.int32)])]  # not a scalar
    for ins in bad:
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(_model("Range", ins), ins)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shape", ["square", "wide", "tall", "batched"])
@pytest.mark.parametrize("upper", [None, 0, 1])
@pytest.mark.parametrize("k", [None, 0, 1, -1, 5, -5, 200, -200])
def test_ms_trilu(n, shape, upper, k):
    dims = {"square": (n, n), "wide": (max(n // 3, 1), n), "tall": (n, max(n // 3, 1)), "batched": (3, n, 7)}[shape]
    x = _x(dims)
    attrs = None if upper is None else {"upper": upper}
    check("Trilu", [x] if k is None else [x, np.array(k, np.int64)], attrs)


def test_ms_trilu_types_empty_and_refusals():
    for dtype in (np.float64, np.float16, np.int64):  # onnxruntime's contrib Trilu types besides float
        x = (rng.standard_normal((2, 5, 6)) * 9).astype(dtype)
        check("Trilu", [x, np.array(-1, np.int64)], {"upper": 0})
        check("Trilu", [x, np.array(2, np.int64)])
    for dtype in (np.int32, np.bool_, np.int8):  # mlrt takes every type, as ai.onnx Trilu: against numpy
        x = (rng.standard_normal((2, 5, 6)) * 9).astype(dtype)
        k = np.array(-1, np.int64)
        np.testing.assert_array_equal(run_mlrt(_model("Trilu", [x, k], {"upper": 0}), [x, k])[0], np.tril(x, -1))
        np.testing.assert_array_equal(run_mlrt(_model("Trilu", [x]), [x])[0], np.triu(x))
    e = np.zeros((0, 4, 5), np.float32)
    assert run_mlrt(_model("Trilu", [e]), [e])[0].shape == e.shape
    for ins in ([_x((5,))], [_x((3, 4)), np.array(1, np.int32)]):
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(_model("Trilu", ins), ins)
