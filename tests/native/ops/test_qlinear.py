"""MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv against onnx.reference:
numpy.matmul shapes and batch broadcasting, int8 / uint8 mixes, zero points per
tensor / row / column / channel, int32 wrap-around, Conv geometry, requantization
rounding and saturation.  Per-row zero points and scales of `a` follow the spec,
which onnx.reference broadcasts along the wrong axis: those are checked against the
spec's formula written out with numpy."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

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


@pytest.mark.parametrize("sa,sb", [s for s in MM_SHAPES if 0 not in s[0] + s[1]])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
def test_qlinearmatmul_shapes(sa, sb, t):
    ins = qlmm_inputs(sa, sb, t)
    if len(sa) == len(sb) == 1:  # (1,) scales would broadcast numpy's scalar product to (1,)
        ins = [v.reshape(()) if k not in (0, 3) else v for k, v in enumerate(ins)]
    check_node("QLinearMatMul", ins, opset=10)


@pytest.mark.parametrize("st", [np.float32, np.float16])
@pytest.mark.parametrize("t,yt", [(np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)])
def test_qlinearmatmul_21(st, t, yt):
    ins = qlmm_inputs((2, 5, 7), (7, 3), t, st, yt)
    check_node("QLinearMatMul", ins, opset=21)
    ins[1], ins[4], ins[6] = np.array(0.5, st), np.array(1.0, st), np.array(1.0, st)  # exact ties
    check_node("QLinearMatMul", ins, opset=21)


def test_qlinearmatmul_saturates():
    ins = qlmm_inputs((4, 64), (64, 4), np.uint8)
    ins[6] = np.array([1e-4], np.float32)  # huge multiplier
    (got,) = check_node("QLinearMatMul", ins, opset=10)
    assert set(np.unique(got)) <= {0, 255}


def test_qlinearmatmul_per_row_and_column():
    a, b = q((2, 6, 5), np.uint8), q((5, 4), np.uint8)
    a_s, a_z = (rng.random(6) * 0.05 + 0.01).astype(np.float32), q((6,), np.uint8)
    b_s, b_z = (rng.random(4) * 0.05 + 0.01).astype(np.float32), q((4,), np.uint8)
    y_s, y_z = np.float32(0.2), np.uint8(100)
    ins = [a, a_s, a_z, b, b_s, b_z, y_s, y_z]
    (got,) = run_mlrt(make_model("QLinearMatMul", ins, opset=21), ins)
    acc = (a.astype(np.int32) - a_z.reshape(-1, 1).astype(np.int32)) @ (b.astype(np.int32) - b_z.astype(np.int32))
    mult = (a_s.reshape(-1, 1) * b_s) / y_s
    want = np.clip(np.rint(acc * mult.astype(np.float64) + 100), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(got, want)


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


def qlconv_inputs(xs, ws, tx, tw, ty, per_channel=False, bias=False):
    m = ws[0]
    w_s = (rng.random(m) * 0.02 + 0.005).astype(np.float32) if per_channel else np.float32(0.01)
    w_z = q((m,), tw) if per_channel else q((), tw)
    ins = [q(xs, tx), np.float32(0.03), q((), tx), q(ws, tw), w_s, w_z, np.float32(0.2), q((), ty)]
    if bias:
        ins.append(rng.integers(-5000, 5000, m).astype(np.int32))
    return ins


@pytest.mark.parametrize("xs,ws,attrs", CONV_CASES)
@pytest.mark.parametrize("tx,tw,ty", [(np.uint8, np.uint8, np.uint8), (np.int8, np.int8, np.int8),
                                      (np.uint8, np.int8, np.uint8)])
def test_qlinearconv(xs, ws, attrs, tx, tw, ty):
    check_node("QLinearConv", qlconv_inputs(xs, ws, tx, tw, ty, bias=True), attrs)
    if len(xs) == 4:  # onnx.reference expands per-channel scales for 2-D only
        check_node("QLinearConv", qlconv_inputs(xs, ws, tx, tw, ty, per_channel=True, bias=True), attrs)


def test_qlinearconv_ties_and_saturation():
    x = np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 1, 1), np.uint8)
    for y_s in (np.float32(2.0), np.float32(1e-3)):  # halves round to even; tiny scale saturates
        ins = [x, np.float32(1.0), np.uint8(0), w, np.float32(1.0), np.uint8(0), y_s, np.uint8(3)]
        check_node("QLinearConv", ins)


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
