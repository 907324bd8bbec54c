"""MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv: numpy.matmul shapes and batch
broadcasting, int8 / uint8 mixes, zero points per tensor / row / column / channel (at
their extremes), int32 wrap-around, Conv geometry (groups, depthwise, strides, pads,
dilations; 1-D, 2-D, 3-D), sizes 1, 2, 13, 127; constant weights (packed once) and fed ones.

The integer products are exact: against onnx.reference.  The requantization is mlrt's
(docs/undefined.md, written out in numpy by tests/undefined.py: float32, as onnxruntime):
against that rule on the exact integer sums, and bit for bit against onnxruntime for
the types it runs, ties included (onnx.reference requantizes in double, which rounds some
ties the other way).  Per-row zero points and scales of `a` follow the spec, which
onnx.reference broadcasts along the wrong axis: their sums are written out with numpy.
The kernels of every instruction set this CPU has (MLRT_QGEMM_KERNEL) give equal results."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from oracle import check_node, make_model, run_mlrt, run_reference
from undefined import requantize

rng = np.random.default_rng(0)


def q(shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


MM_SHAPES = [((4, 3), (3, 2)), ((1, 1), (1, 1)), ((13, 127), (127, 9)), ((5,), (5, 3)), ((4, 5), (5,)), ((7,), (7,)),
             ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((3, 4), (2, 4, 6)), ((0, 4), (4, 3)), ((3, 0), (0, 2)),
             ((2, 0, 3), (3, 4))]


@pytest.mark.parametrize("sa,sb", MM_SHAPES)
@pytest.mark.parametrize("ta,tb", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8), (np.int8, np.uint8)])
def test_matmulinteger_shapes(sa, sb, ta, tb):
    a, b = q(sa, ta), q(sb, tb)
    check_node("MatMulInteger", [a, b])
    check_node("MatMulInteger", [a, b, q((), ta), q((1,), tb)])


def test_matmulinteger_per_column_b():
    a, b = q((6, 5), np.uint8), q((5, 4), np.int8)
    check_node("MatMulInteger", [a, b, np.uint8(3), q((4,), np.int8)])
    check_node("MatMulInteger", [q((2, 6, 5), np.uint8), q((2, 5, 4), np.int8), None, q((2, 1, 4), np.int8)])


def test_matmulinteger_per_row_a():
    a, b = q((2, 6, 5), np.uint8), q((5, 4), np.uint8)
    for za in (q((6,), np.uint8), q((2, 6, 1), np.uint8)):
        (got,) = run_mlrt(make_model("MatMulInteger", [a, b, za]), [a, b, za])
        zrow = za.reshape(-1, 1) if za.ndim == 1 else za
        np.testing.assert_array_equal(got, (a.astype(np.int32) - zrow) @ b.astype(np.int32))


def test_matmulinteger_long_sums():
    """K beyond 256 (the float-exact chunk) with extreme values and zero points."""
    for k in (255, 256, 257, 700):
        a, b = q((3, k), np.uint8), q((k, 5), np.int8)
        a[0], b[:, 0] = 255, -128
        check_node("MatMulInteger", [a, b, np.uint8(0), np.int8(127)])
        check_node("MatMulInteger", [q((2, 3, k), np.int8), b, np.int8(-128), q((5,), np.int8)])


def test_matmulinteger_wraps_in_int32():
    a = np.full((1, 40000), 255, np.uint8)
    b = np.full((40000, 2), 255, np.uint8)  # 255 * 255 * 40000 > 2^31
    (got,) = check_node("MatMulInteger", [a, b])
    assert got[0, 0] == np.int32(np.int64(255 * 255 * 40000) - 2 ** 32)


def test_matmulinteger_bad_inputs():
    a, b = q((3, 4), np.uint8), q((5, 2), np.uint8)
    with pytest.raises(mlrt.MlrtError, match="do not multiply"):
        run_mlrt(make_model("MatMulInteger", [a, b]), [a, b])
    b = q((4, 2), np.uint8)
    for bad in ([a, b, np.int8(1)], [a, b, q((4,), np.uint8)], [a.astype(np.int32), b]):
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(make_model("MatMulInteger", bad), bad)


def qlmm_inputs(sa, sb, t, st=np.float32, yt=None):
    yt = yt or t
    return [q(sa, t), np.array([0.02], st), q((1,), t), q(sb, t), np.array([0.03], st), q((1,), t),
            np.array([0.05], st), q((1,), yt)]


def matmul_sums(a, a_z, b, b_z):
    """(a - a_z) @ (b - b_z) in int32 (wrapping); a_z per tensor or per row ((M,) or
    [..., M, 1]), b_z per tensor or per column."""
    a_z, b_z = np.asarray(a_z, np.int64), np.asarray(b_z, np.int64)
    a_z = a_z.reshape(-1, 1) if a_z.ndim == 1 and a_z.size > 1 else a_z
    acc = np.matmul(a.astype(np.int64) - a_z, b.astype(np.int64) - b_z)
    return acc.astype(np.int32)  # (wraps)


def qlinearmatmul_expected(ins):
    """The spec's QLinearMatMul with mlrt's requantization (tests/undefined.py)."""
    a, a_s, a_z, b, b_s, b_z, y_s, y_z = ins
    a_s = np.asarray(a_s, np.float32)
    a_s = a_s.reshape(-1, 1) if a_s.ndim == 1 and a_s.size > 1 else a_s
    acc = matmul_sums(a, a_z, b, b_z)
    return requantize(acc, a_s, np.asarray(b_s, np.float32), np.asarray(y_s, np.float32), y_z, np.asarray(y_z).dtype)


def check_qlinearmatmul(ins, opset=21):
    (got,) = run_mlrt(make_model("QLinearMatMul", ins, opset=opset), ins)
    np.testing.assert_array_equal(got, qlinearmatmul_expected(ins))
    return got


@pytest.mark.parametrize("sa,sb", [s for s in MM_SHAPES if 0 not in s[0] + s[1]])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
def test_qlinearmatmul_shapes(sa, sb, t):
    ins = qlmm_inputs(sa, sb, t)
    if len(sa) == len(sb) == 1:  # (1,) scales would broadcast numpy's scalar product to (1,)
        ins = [v.reshape(()) if k not in (0, 3) else v for k, v in enumerate(ins)]
    check_qlinearmatmul(ins, opset=10)


@pytest.mark.parametrize("st", [np.float32, np.float16])
@pytest.mark.parametrize("t,yt", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)])
def test_qlinearmatmul_21(st, t, yt):
    """float16 scales convert to float32 first; y of another type than a."""
    ins = qlmm_inputs((2, 5, 7), (7, 3), t, st, yt)
    check_qlinearmatmul(ins)
    ins[1], ins[4], ins[6] = np.array(0.5, st), np.array(1.0, st), np.array(1.0, st)  # exact ties
    check_qlinearmatmul(ins)


def test_qlinearmatmul_saturates():
    ins = qlmm_inputs((4, 64), (64, 4), np.uint8)
    ins[6] = np.array([1e-4], np.float32)  # huge multiplier
    got = check_qlinearmatmul(ins, opset=10)
    assert set(np.unique(got)) <= {0, 255}


def test_qlinearmatmul_per_row_and_column():
    a, b = q((2, 6, 5), np.uint8), q((5, 4), np.uint8)
    a_s, a_z = (rng.random(6) * 0.05 + 0.01).astype(np.float32), q((6,), np.uint8)
    b_s, b_z = (rng.random(4) * 0.05 + 0.01).astype(np.float32), q((4,), np.uint8)
    y_s, y_z = np.float32(0.2), np.uint8(100)
    ins = [a, a_s, a_z, b, b_s, b_z, y_s, y_z]
    check_qlinearmatmul(ins)
    # zero points per row and per column, scales all equal; and per column only
    check_qlinearmatmul([a, np.full(6, 0.02, np.float32), a_z, b, np.full(4, 0.03, np.float32), b_z, y_s, y_z])
    check_qlinearmatmul([a, np.float32(0.02), np.uint8(7), b, b_s, b_z, y_s, y_z])
    check_qlinearmatmul([a, a_s, a_z, b, np.float32(0.03), np.uint8(9), y_s, y_z])


def test_qlinearmatmul_bad_inputs():
    ins = qlmm_inputs((3, 4), (4, 2), np.uint8)
    bad = list(ins)
    bad[1] = np.array([0.1, 0.2], np.float32)  # 2 scales for 3 rows
    bad[2] = q((2,), np.uint8)
    with pytest.raises(mlrt.MlrtError, match="per row"):
        run_mlrt(make_model("QLinearMatMul", bad, opset=21), bad)
    bad = list(ins)
    bad[4] = bad[4].astype(np.float16)
    with pytest.raises(mlrt.MlrtError, match="differ"):
        run_mlrt(make_model("QLinearMatMul", bad, opset=21), bad)
    with pytest.raises(mlrt.MlrtError, match="expected float"):
        run_mlrt(make_model("QLinearMatMul", bad, opset=10), bad)


CONV_CASES = [
    ((1, 1, 3, 3), (1, 1, 2, 2), {}),
    ((1, 1, 3, 3), (2, 1, 2, 2), {"pads": [1, 1, 1, 1]}),
    ((2, 4, 9, 7), (6, 2, 3, 3), {"group": 2, "strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 2, 1]}),
    ((1, 3, 13), (4, 3, 3), {"auto_pad": "SAME_UPPER"}),
    ((1, 2, 5, 4, 3), (3, 2, 2, 2, 2), {"pads": [1, 0, 1, 0, 1, 0]}),
    ((1, 6, 8, 8), (6, 1, 3, 3), {"group": 6, "pads": [1, 1, 1, 1]}),  # depthwise
    # depthwise over more than one group of 16 channels, widths not a multiple of 4, a row stride
    ((1, 20, 7, 11), (20, 1, 3, 3), {"group": 20, "pads": [1, 1, 1, 1]}),
    ((2, 17, 9, 6), (17, 1, 3, 3), {"group": 17, "strides": [2, 1], "pads": [0, 1, 2, 1]}),
    ((2, 8, 5, 5), (4, 8, 1, 1), {}),  # pointwise
    ((0, 2, 4, 4), (3, 2, 3, 3), {}),
    ((1, 64, 6, 6), (5, 64, 3, 3), {"pads": [1, 1, 1, 1]}),  # 576 taps: chunks of input channels
    ((1, 80, 5, 5), (4, 40, 3, 3), {"group": 2}),  # chunks within groups
    ((1, 2, 20, 20), (3, 2, 17, 17), {}),  # a window over 256 taps (double)
]


@pytest.mark.parametrize("xs,ws,attrs", CONV_CASES)
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)])
def test_convinteger(xs, ws, attrs, tx, tw):
    x, w = q(xs, tx), q(ws, tw)
    check_node("ConvInteger", [x, w], attrs)
    check_node("ConvInteger", [x, w, q((), tx), q((), tw)], attrs)
    if len(xs) == 4:  # onnx.reference expands per-channel zero points for 2-D only
        check_node("ConvInteger", [x, w, q((1,), tx), q((ws[0],), tw)], attrs)


def as_2d(inputs, attrs):
    """A 1-D convolution's inputs and attributes as the equal 2-D one (a unit height)."""
    out = [v.reshape(v.shape[:2] + (1,) + v.shape[2:]) if k in (0, 3) else v for k, v in enumerate(inputs)]
    return out, {k: ([1] + v if k != "pads" else [0, v[0], 0, v[1]]) if isinstance(v, list) else v
                 for k, v in attrs.items()}


def test_per_channel_1d_against_2d():
    """Per-channel zero points / scales of 1-D convolutions (onnx.reference takes 2-D
    only) against the same convolution written as 2-D."""
    attrs = {"pads": [1, 2], "strides": [2], "dilations": [2]}
    x, w, wz = q((2, 3, 11), np.uint8), q((4, 3, 3), np.int8), q((4,), np.int8)
    ins = [x, w, np.uint8(7), wz]
    (got,) = run_mlrt(make_model("ConvInteger", ins, attrs), ins)
    ins2, attrs2 = as_2d([x, None, None, w], attrs)
    (want,) = check_node("ConvInteger", [ins2[0], ins2[3], np.uint8(7), wz], attrs2)
    np.testing.assert_array_equal(got, want.reshape(got.shape))
    ins = qlconv_inputs((2, 3, 11), (4, 3, 3), np.uint8, np.int8, np.uint8, per_channel=True, bias=True)
    (got,) = run_mlrt(make_model("QLinearConv", ins, attrs), ins)
    ins2, attrs2 = as_2d(ins, attrs)
    (want,) = check_node("QLinearConv", ins2, attrs2)
    np.testing.assert_array_equal(got, want.reshape(got.shape))


def test_convinteger_bad_inputs():
    x, w = q((1, 2, 4, 4), np.uint8), q((3, 2, 2, 2), np.uint8)
    for bad in ([x, w, q((2,), np.uint8)], [x, w, None, q((2,), np.uint8)], [x, w.astype(np.int32)],
                [x, q((3, 3, 2, 2), np.uint8)]):
        with pytest.raises(mlrt.MlrtError):
            run_mlrt(make_model("ConvInteger", bad), bad)


def convtofloat_inputs(xs, ws, tx, tw, per_channel=False, bias=False):
    """ConvIntegerToFloat's inputs: x, w, x_scale, w_scale, x_zero_point, w_zero_point [, bias]."""
    m = ws[0]
    w_s = (rng.random(m) * 0.02 + 0.005).astype(np.float32) if per_channel else np.array([0.01], np.float32)
    w_z = q((m,), tw) if per_channel else q((), tw)
    ins = [q(xs, tx), q(ws, tw), np.array([0.037], np.float32), w_s, q((), tx), w_z]
    if bias:
        ins.append((rng.standard_normal(m) * 20).astype(np.float32))
    return ins


def convtofloat_expected(ins, attrs, lo=-np.inf, hi=np.inf):
    """The chain the node stands for, in float32 steps: Cast, Mul by x_scale * w_scale, Add, Clip."""
    x, w, x_s, w_s, x_z, w_z = ins[:6]
    acc = conv_sums(x, x_z, w, w_z, attrs).astype(np.float32)
    per = (1, -1) + (1,) * (x.ndim - 2)
    y = acc * (np.float32(x_s[0]) * w_s).reshape(per if w_s.size > 1 else ())
    if len(ins) > 6:
        y = y + ins[6].reshape(per)
    return np.minimum(np.maximum(y, np.float32(lo)), np.float32(hi))


def run_convtofloat(ins, attrs, activation=None):
    if activation:
        attrs = dict(attrs, activation=activation[0], **({"activation_params": activation[1]} if activation[1] else {}))
    return run_mlrt(make_model("ConvIntegerToFloat", ins, attrs, domain="com.microsoft", opset=1), ins)[0]


@pytest.mark.parametrize("xs,ws,attrs", [c for c in CONV_CASES if 0 not in c[0]])
@pytest.mark.parametrize("tx,tw", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)])
def test_convinteger_to_float(xs, ws, attrs, tx, tw):
    """com.microsoft ConvIntegerToFloat (mlrt's own, what fuse_conv_integer_to_float makes)
    against its chain in float32 numpy on the exact sums, bit for bit: per-tensor and
    per-channel scales and zero points, bias, Relu and Clip; w constant (packed) and fed."""
    ins = convtofloat_inputs(xs, ws, tx, tw)
    np.testing.assert_array_equal(run_convtofloat(ins, attrs), convtofloat_expected(ins, attrs))
    ins = convtofloat_inputs(xs, ws, tx, tw, per_channel=True, bias=True)
    np.testing.assert_array_equal(run_convtofloat(ins, attrs, ("Relu", [])), convtofloat_expected(ins, attrs, 0))
    want = convtofloat_expected(ins, attrs, -1.5, 2.5)
    np.testing.assert_array_equal(run_convtofloat(ins, attrs, ("Clip", [-1.5, 2.5])), want)
    model, feeds = const_model("ConvIntegerToFloat", ins, [1, 2, 3, 5, 6], dict(attrs, activation="Clip",
                                                                             activation_params=[-1.5, 2.5]),
                               domain="com.microsoft")
    np.testing.assert_array_equal(run_mlrt(model, feeds)[0], want)


def test_convinteger_to_float_bad_inputs():
    ins = convtofloat_inputs((1, 4, 5, 5), (3, 4, 3, 3), np.uint8, np.int8, bias=True)
    for k, bad, match in [(3, np.ones(2, np.float32), "w_scale"), (6, np.ones(4, np.float32), "bias"),
                          (2, np.ones(2, np.float32), "x_scale"), (3, np.ones(3, np.float64), "w_scale")]:
        given = list(ins)
        given[k] = bad
        with pytest.raises(mlrt.MlrtError, match=match):
            run_convtofloat(given, {})
    with pytest.raises(mlrt.MlrtError, match="activation"):
        run_convtofloat(ins, {}, ("Tanh", []))


def qlconv_inputs(xs, ws, tx, tw, ty, per_channel=False, bias=False):
    m = ws[0]
    w_s = (rng.random(m) * 0.02 + 0.005).astype(np.float32) if per_channel else np.float32(0.01)
    w_z = q((m,), tw) if per_channel else q((), tw)
    ins = [q(xs, tx), np.float32(0.03), q((), tx), q(ws, tw), w_s, w_z, np.float32(0.2), q((), ty)]
    if bias:
        ins.append(rng.integers(-5000, 5000, m).astype(np.int32))
    return ins


def conv_sums(x, x_z, w, w_z, attrs, bias=None):
    """Conv(x - x_z, w - w_z[m]) (+ bias) in int32: onnx.reference's float64 Conv on the
    differences, exact for these sizes (any rank, per-channel zero points)."""
    m = w.shape[0]
    wz = np.asarray(w_z, np.float64).reshape((-1,) + (1,) * (w.ndim - 1)) if np.size(w_z) > 1 else np.float64(w_z)
    xd = x.astype(np.float64) - np.float64(np.asarray(x_z).reshape(-1)[0])
    wd = w.astype(np.float64) - wz
    (acc,) = run_reference(make_model("Conv", [xd, wd], attrs), [xd, wd])
    acc = np.rint(acc).astype(np.int64)
    if bias is not None:
        acc += np.asarray(bias, np.int64).reshape((1, m) + (1,) * (x.ndim - 2))
    return acc.astype(np.int32)


def qlinearconv_expected(ins, attrs):
    """The spec's QLinearConv with mlrt's requantization (tests/undefined.py)."""
    x, x_s, x_z, w, w_s, w_z, y_s, y_z = ins[:8]
    acc = conv_sums(x, x_z, w, w_z, attrs, ins[8] if len(ins) > 8 else None)
    w_s = np.asarray(w_s, np.float32)
    w_s = w_s.reshape((1, -1) + (1,) * (x.ndim - 2)) if w_s.size > 1 else w_s
    return requantize(acc, np.asarray(x_s, np.float32), w_s, np.asarray(y_s, np.float32), y_z, np.asarray(y_z).dtype)


def const_model(op_type, inputs, consts, attrs=None, opset=None, domain=""):
    """A one-node model whose inputs at indexes `consts` are initializers (what the plan
    packs once); returns the model and the other inputs' values."""
    model = make_model(op_type, inputs, attrs, opset=opset or (1 if domain else None), domain=domain)
    g = model.graph
    names = list(g.node[0].input)
    for i in consts:
        g.initializer.append(numpy_helper.from_array(np.asarray(inputs[i]), names[i]))
    keep = [v for v in g.input if v.name not in {names[i] for i in consts}]
    del g.input[:]
    g.input.extend(keep)
    return model, [v for i, v in enumerate(inputs) if i not in consts and v is not None]


def check_qlinearconv(ins, attrs):
    want = qlinearconv_expected(ins, attrs)
    (got,) = run_mlrt(make_model("QLinearConv", ins, attrs), ins)
    np.testing.assert_array_equal(got, want)
    model, feeds = const_model("QLinearConv", ins, [i for i in range(1, len(ins))], attrs)  # w packed once
    (got,) = run_mlrt(model, feeds)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("xs,ws,attrs", CONV_CASES)
@pytest.mark.parametrize("tx,tw,ty", [(np.uint8, np.uint8, np.uint8), (np.int8, np.int8, np.int8),
                                      (np.uint8, np.int8, np.uint8), (np.int8, np.uint8, np.uint8)])
def test_qlinearconv(xs, ws, attrs, tx, tw, ty):
    check_qlinearconv(qlconv_inputs(xs, ws, tx, tw, ty, bias=True), attrs)
    check_qlinearconv(qlconv_inputs(xs, ws, tx, tw, ty, per_channel=True, bias=True), attrs)


def test_qlinearconv_ties_and_saturation():
    x = np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 1, 1), np.uint8)
    for y_s in (np.float32(2.0), np.float32(1e-3)):  # halves round to even; tiny scale saturates
        ins = [x, np.float32(1.0), np.uint8(0), w, np.float32(1.0), np.uint8(0), y_s, np.uint8(3)]
        check_qlinearconv(ins, {})
    # the zero point is added after rounding: 1.5 -> 2 -> 5 (onnx.reference rounds 1.5 + 3 to 4)
    (got,) = run_mlrt(make_model("QLinearConv", ins[:6] + [np.float32(2.0), np.uint8(3)]), ins[:6] + [np.float32(2.0),
                                                                                                      np.uint8(3)])
    assert got.reshape(-1)[:4].tolist() == [3, 3, 4, 5]


def test_requantization_tie_in_float32():
    """acc 4710 times the multiplier 0.0071125263 is exactly 33.5 in float32 (34, half to
    even) but 33.49999904 in double (33, onnx.reference): mlrt gives 34, as onnxruntime."""
    assert np.float32(4710) * np.float32(0.0071125263) == np.float32(33.5)
    x = np.full((1, 30, 1, 1), 157, np.uint8)  # 30 channels of 157 * 1: acc 4710
    w = np.ones((1, 30, 1, 1), np.int8)
    ins = [x, np.float32(0.0071125263), np.uint8(0), w, np.float32(1.0), np.int8(0), np.float32(1.0), np.uint8(0)]
    (got,) = run_mlrt(make_model("QLinearConv", ins), ins)
    assert got.item() == 34
    (ref,) = run_reference(make_model("QLinearConv", ins), ins)
    assert ref.item() == 33  # (the double rounding mlrt does not follow)
    a, b = x.reshape(1, 30), w.reshape(30, 1)
    mm = [a, np.float32(0.0071125263), np.uint8(0), b, np.float32(1.0), np.int8(0), np.float32(1.0), np.uint8(0)]
    (got,) = run_mlrt(make_model("QLinearMatMul", mm, opset=10), mm)
    assert got.item() == 34


def test_qlinearconv_bad_inputs():
    ins = qlconv_inputs((1, 2, 4, 4), (3, 2, 2, 2), np.uint8, np.uint8, np.uint8)
    bad = list(ins)
    bad[4] = np.ones(2, np.float32)  # w_scale for 2 of 3 channels
    with pytest.raises(mlrt.MlrtError, match="w_scale"):
        run_mlrt(make_model("QLinearConv", bad), bad)
    bad = list(ins) + [np.zeros(3, np.float32)]  # float bias
    with pytest.raises(mlrt.MlrtError, match="int32"):
        run_mlrt(make_model("QLinearConv", bad), bad)
    bad = list(ins)
    bad[1] = np.float16(1.0)
    with pytest.raises(mlrt.MlrtError, match="x_scale"):
        run_mlrt(make_model("QLinearConv", bad), bad)


# -- bit for bit against onnxruntime ----------------------------------------------------------------

ORT_TYPES = [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)]  # what onnxruntime runs
ORT_CONV = [  # (x, w, attrs): sizes 1, 2, 13, 127; groups, depthwise, strides, pads, dilations; 1-D, 2-D
    ((1, 1, 1, 1), (1, 1, 1, 1), {}),
    ((2, 2, 13, 13), (13, 2, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 127, 7, 7), (13, 127, 1, 1), {}),
    ((1, 13, 9, 9), (2, 13, 3, 3), {"strides": [2, 2], "dilations": [2, 1], "pads": [2, 1, 0, 1]}),
    ((1, 16, 14, 14), (16, 1, 3, 3), {"group": 16, "pads": [1, 1, 1, 1]}),
    ((1, 13, 15, 15), (13, 1, 3, 3), {"group": 13, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 12, 11, 9), (24, 1, 5, 5), {"group": 12, "pads": [2, 2, 2, 2], "dilations": [1, 2]}),
    ((1, 6, 10, 10), (9, 2, 3, 3), {"group": 3, "strides": [1, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 33, 33), (16, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    ((1, 24, 8, 8), (40, 24, 1, 1), {"strides": [2, 2]}),
    ((2, 3, 29), (5, 3, 4), {"pads": [2, 1], "dilations": [2]}),
    # depthwise as MobileNet has it: 16 channels to a vector and a last group of 8, 7 x 7
    # planes (a partial block of 4 columns), stride 2 on a larger plane, a depth
    # multiplier, dilation, uneven pads, two images; 1-D
    ((1, 40, 7, 7), (40, 1, 3, 3), {"group": 40, "pads": [1, 1, 1, 1]}),
    ((1, 24, 28, 28), (24, 1, 3, 3), {"group": 24, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((1, 18, 12, 12), (36, 1, 3, 3), {"group": 18, "pads": [1, 1, 1, 1]}),
    ((1, 32, 20, 19), (32, 1, 3, 3), {"group": 32, "pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    ((2, 16, 9, 9), (16, 1, 3, 3), {"group": 16, "pads": [0, 1, 2, 0]}),
    ((1, 20, 33), (20, 1, 5), {"group": 20, "pads": [2, 2]}),
    # channels per group a multiple of 4 (the channel-quad planes, kernels/qlinear_planes.c):
    # stride 2 on two images, rows over 64 columns at strides 1 and 2, groups of 4 channels
    # with dilation, stride 3, 1-D at stride 2, a padded 1 x 1 window
    ((2, 8, 13, 13), (13, 8, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 12, 9, 70), (7, 12, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 8, 11, 140), (5, 8, 3, 3), {"strides": [2, 2], "pads": [0, 1, 1, 0]}),
    ((1, 16, 10, 10), (8, 4, 3, 3), {"group": 4, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((1, 4, 17, 17), (3, 4, 2, 2), {"strides": [3, 3], "pads": [1, 1, 1, 1]}),
    ((1, 8, 31), (6, 8, 3), {"strides": [2], "pads": [1, 1]}),
    ((1, 12, 9, 9), (10, 12, 1, 1), {"pads": [1, 1, 1, 1]}),
    # channels per group a multiple of 64 and 16 filters or more (on AMX where it runs:
    # 16 channel quads at one tap a step): a last block of 4 filters, two blocks of 64
    # channels at stride 2 with dilation on two images, two groups of 17 filters
    ((1, 64, 9, 9), (20, 64, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 128, 9, 11), (32, 128, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "dilations": [1, 2]}),
    ((1, 128, 7, 7), (34, 64, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    # 1 x 1 windows with 16 filters or more (AMX where it runs: x's columns packed, k rounded
    # up to 64): 24 channels, two groups of 40 channels on two images, and at stride 2 over
    # the planes with 64 channels
    ((1, 24, 12, 13), (20, 24, 1, 1), {}),
    ((2, 80, 5, 5), (34, 40, 1, 1), {"group": 2}),
    ((1, 64, 9, 9), (16, 64, 1, 1), {"strides": [2, 2]}),
    ((1, 64, 40), (16, 64, 3), {"strides": [2], "pads": [1, 1]}),  # (1-D: one row of taps)
]


def _ort():
    return pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle of the float32 requantization")


def run_ort(model, feeds):
    ort = _ort()
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: np.asarray(x) for i, x in zip(sess.get_inputs(), feeds)})


def extreme_zp(t, k):
    """Zero points at the ends of the range, then random."""
    info = np.iinfo(t)
    return t((info.min, info.max)[k]) if k < 2 else t(rng.integers(info.min, info.max, endpoint=True))


@pytest.mark.parametrize("case", range(len(ORT_CONV)))
@pytest.mark.parametrize("tx,tw", ORT_TYPES)
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinearconv_matches_onnxruntime(case, tx, tw, per_channel):
    xs, ws, attrs = ORT_CONV[case]
    m = ws[0]
    for k in range(3):
        w_z = extreme_zp(tw, 2 - k) if tw == np.uint8 else tw(0)  # (onnxruntime: one w zero point, 0 for int8)
        w_s = (rng.random(m) * 0.02 + 0.002).astype(np.float32) if per_channel else np.float32(0.01)
        ins = [q(xs, tx), np.float32(rng.random() * 0.05 + 0.005), extreme_zp(tx, k), q(ws, tw), w_s,
               np.full(m, w_z, tw) if per_channel else w_z, np.float32(rng.random() * 0.3 + 0.05),
               extreme_zp(tx, (k + 1) % 3), rng.integers(-20000, 20000, m).astype(np.int32)]
        want = run_ort(make_model("QLinearConv", ins, attrs), ins)[0]
        np.testing.assert_array_equal(run_mlrt(make_model("QLinearConv", ins, attrs), ins)[0], want)
        model, feeds = const_model("QLinearConv", ins, range(1, 9), attrs)
        np.testing.assert_array_equal(run_mlrt(model, feeds)[0], want)
        np.testing.assert_array_equal(want, qlinearconv_expected(ins, attrs))  # (the rule is onnxruntime's)


@pytest.mark.parametrize("sa,sb", [((1, 1), (1, 1)), ((2, 13), (13, 127)), ((13, 127), (127, 2)),
                                   ((3, 2, 64), (64, 65)), ((1, 300), (300, 1000))])
@pytest.mark.parametrize("ta,tb", ORT_TYPES)
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinearmatmul_matches_onnxruntime(sa, sb, ta, tb, per_column):
    n = sb[-1]
    for k in range(3):
        b_s = (rng.random((1, n)) * 0.05 + 0.002).astype(np.float32) if per_column else np.float32(0.03)
        b_z = extreme_zp(tb, k)
        b_z = np.full((1, n), b_z, tb) if per_column else b_z
        ins = [q(sa, ta), np.float32(0.02), extreme_zp(ta, k), q(sb, tb), b_s, b_z, np.float32(0.4),
               extreme_zp(ta, (k + 2) % 3)]
        want = run_ort(make_model("QLinearMatMul", ins, opset=10), ins)[0]
        np.testing.assert_array_equal(run_mlrt(make_model("QLinearMatMul", ins, opset=10), ins)[0], want)
        model, feeds = const_model("QLinearMatMul", ins, range(1, 8), opset=10)  # b packed once
        np.testing.assert_array_equal(run_mlrt(model, feeds)[0], want)


@pytest.mark.parametrize("case", range(len(ORT_CONV)))
def test_convinteger_matches_onnxruntime(case):
    xs, ws, attrs = ORT_CONV[case]
    for k in range(3):
        ins = [q(xs, np.uint8), q(ws, np.uint8), extreme_zp(np.uint8, k), extreme_zp(np.uint8, 2 - k)]
        want = run_ort(make_model("ConvInteger", ins, attrs), ins)[0]
        np.testing.assert_array_equal(run_mlrt(make_model("ConvInteger", ins, attrs), ins)[0], want)
        model, feeds = const_model("ConvInteger", ins, [1, 2, 3], attrs)
        np.testing.assert_array_equal(run_mlrt(model, feeds)[0], want)


# the work split of the product (kernels/qlinear_conv.c, qconv_split): few column panels
# cut into even slices of 16-column vectors (14 x 14: 196 columns; a 3 x 3 window's grid of
# 14 x 16; 20 x 20: 7 panels), fewer vectors than threads cut by rows too (7 x 7: 49
# columns; 7 x 7 out of a stride-2 1 x 1 window), image-groups against the threads (two
# images, three groups), a 3-D window (columns gathered element by element), and a
# 1-wide window over the phase planes (its grid is y's: results stored in place)
SPLIT_CONV = [
    ((1, 64, 14, 14), (96, 64, 1, 1), {}),
    ((1, 160, 7, 7), (22, 160, 1, 1), {}),
    ((1, 24, 14, 14), (40, 24, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 16, 20, 20), (13, 16, 1, 1), {}),
    ((1, 32, 14, 14), (70, 32, 1, 1), {"strides": [2, 2]}),
    ((2, 40, 7, 7), (30, 40, 1, 1), {}),
    ((1, 27, 7, 7), (33, 9, 1, 1), {"group": 3}),
    ((1, 8, 5, 6, 7), (9, 8, 2, 2, 2), {"pads": [1, 0, 1, 0, 1, 0]}),
    ((1, 8, 9, 10), (12, 8, 3, 1), {"pads": [1, 1, 1, 1], "strides": [1, 2]}),
    # (AMX where it runs) one panel cut by rows in blocks of 16 (48 filters: 32 + 16 on two
    # threads), a 14 x 14 plane's few panels cut in slices
    ((1, 64, 7, 7), (48, 64, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 64, 14, 14), (64, 64, 3, 3), {"pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize("case", range(len(SPLIT_CONV)))
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_qlinearconv_split_matches_onnxruntime(case, threads):
    xs, ws, attrs = SPLIT_CONV[case]
    m = ws[0]
    for k, (tx, tw) in enumerate(ORT_TYPES):
        ins = [q(xs, tx), np.float32(0.02), extreme_zp(tx, k), q(ws, tw), (rng.random(m) * 0.02 + 0.002).astype(np.float32),
               np.full(m, extreme_zp(tw, 2 - k) if tw == np.uint8 else 0, tw), np.float32(0.2),
               extreme_zp(tx, (k + 1) % 3), rng.integers(-20000, 20000, m).astype(np.int32)]
        want = run_ort(make_model("QLinearConv", ins, attrs), ins)[0]
        model, feeds = const_model("QLinearConv", ins, range(1, 9), attrs)
        np.testing.assert_array_equal(run_mlrt(model, feeds, intra_op_num_threads=threads)[0], want)
        ins = [q(xs, np.uint8), q(ws, np.uint8), extreme_zp(np.uint8, k), extreme_zp(np.uint8, 2 - k)]
        want = run_ort(make_model("ConvInteger", ins, attrs), ins)[0]
        np.testing.assert_array_equal(run_mlrt(make_model("ConvInteger", ins, attrs), ins,
                                               intra_op_num_threads=threads)[0], want)


@pytest.mark.parametrize("sa,sb", [((1, 1), (1, 1)), ((2, 13), (13, 127)), ((3, 2, 130), (130, 65))])
@pytest.mark.parametrize("ta,tb", ORT_TYPES)
def test_matmulinteger_matches_onnxruntime(sa, sb, ta, tb):
    for k in range(3):
        ins = [q(sa, ta), q(sb, tb), extreme_zp(ta, k), extreme_zp(tb, 2 - k)]
        want = run_ort(make_model("MatMulInteger", ins), ins)[0]
        np.testing.assert_array_equal(run_mlrt(make_model("MatMulInteger", ins), ins)[0], want)
        model, feeds = const_model("MatMulInteger", ins, [1, 3])
        np.testing.assert_array_equal(run_mlrt(model, feeds)[0], want)


def test_constant_weights_every_type():
    """Weights packed once (initializers) give what fed weights give, for the type mixes
    onnxruntime does not run, per-channel zero points, 3-D convolutions."""
    for tx, tw in [(np.int8, np.uint8), (np.uint8, np.uint8), (np.int8, np.int8)]:
        for xs, ws, attrs in CONV_CASES + ORT_CONV:
            if 0 in xs:
                continue
            m = ws[0]
            ins = [q(xs, tx), q(ws, tw), extreme_zp(tx, 1), q((m,), tw)]
            (fed,) = run_mlrt(make_model("ConvInteger", ins, attrs), ins)
            np.testing.assert_array_equal(fed, conv_sums(ins[0], ins[2], ins[1], ins[3], attrs))
            model, feeds = const_model("ConvInteger", ins, [1, 3], attrs)
            np.testing.assert_array_equal(run_mlrt(model, feeds)[0], fed)
        a, b = q((2, 5, 130), tx), q((130, 67), tw)
        ins = [a, b, q((5, 1), tx), q((67,), tw)]
        model, feeds = const_model("MatMulInteger", ins, [1, 3])
        np.testing.assert_array_equal(run_mlrt(model, feeds)[0], matmul_sums(a, ins[2], b, ins[3]))


# -- every kernel this CPU has ----------------------------------------------------------------------

_KERNELS_SCRIPT = """
import sys, numpy as np
sys.path[:0] = sys.argv[2:]
import test_qlinear as t
out = []
for tx, tw in t.ORT_TYPES + [(np.int8, np.uint8)]:
    for xs, ws, attrs in t.ORT_CONV + t.CONV_CASES:
        if 0 in xs:
            continue
        ins = t.qlconv_inputs(xs, ws, tx, tw, tx, per_channel=True, bias=True)
        out.append(t.run_mlrt(t.make_model("QLinearConv", ins, attrs), ins)[0])
        ci = [ins[0], ins[3], ins[2], ins[5]]
        out.append(t.run_mlrt(t.make_model("ConvInteger", ci, attrs), ci)[0])
        fi = [ins[0], ins[3], np.array([0.03], np.float32), ins[4], ins[2], ins[5], ins[8].astype(np.float32)]
        out.append(t.run_convtofloat(fi, attrs, ("Clip", [-20.0, 30.0])))
    # (16 rows and more: the products on AMX where it runs; K past and short of 64, columns past a panel)
    for sa, sb in [((13, 127), (127, 9)), ((2, 3, 64), (64, 70)), ((37, 200), (200, 130)), ((2, 16, 64), (64, 16)),
                   ((3, 20, 7), (7, 65))]:
        mi = [t.q(sa, tx), t.q(sb, tw), t.q((), tx), t.q((sb[-1],), tw)]
        out.append(t.run_mlrt(t.make_model("MatMulInteger", mi), mi)[0])
np.savez(sys.argv[1], *out)
"""


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split(":", 1)[1].split()}


# MLRT_QGEMM_KERNEL value -> the /proc/cpuinfo flags it needs
_KERNELS = {"amx": ("avx512bw", "avx512_vnni", "amx_tile", "amx_int8"), "avx512vnni": ("avx512bw", "avx512_vnni"),
            "avx512bw": ("avx512bw",), "avxvnni": ("avx2", "avx_vnni"), "avx2": ("avx2",), "portable": ()}


def test_every_kernel_gives_the_same(tmp_path):
    """Every kernel this CPU has (portable C, AVX2, AVX-VNNI, AVX-512 BW, AVX-512 VNNI, AMX:
    MLRT_QGEMM_KERNEL caps the choice) computes the same bits, products and depthwise."""
    here = Path(__file__).resolve().parent
    paths = [str(here), str(here.parents[1])]
    flags = _cpu_flags()
    kernels = [k for k, need in _KERNELS.items() if all(f in flags for f in need)]
    if len(kernels) < 2:
        pytest.skip("only the portable kernels run on this CPU (or /proc/cpuinfo is not readable)")
    results = {}
    for kernel in ["", *kernels]:
        env = dict(os.environ, MLRT_QGEMM_KERNEL=kernel)
        out = tmp_path / f"k{kernel or 'default'}.npz"
        subprocess.run([sys.executable, "-c", _KERNELS_SCRIPT, str(out), *paths], env=env, check=True, cwd=here)
        results[kernel] = np.load(out)
    base = results[""]
    for kernel, got in results.items():
        assert sorted(got.files) == sorted(base.files)
        for name in base.files:
            np.testing.assert_array_equal(got[name], base[name], err_msg=f"{kernel or 'default'} {name}")
