"""com.microsoft quantized contrib operators, second set (as onnxruntime's): QGemm,
QLinearSoftmax, QLinearAveragePool, QLinearWhere and NhwcMaxPool.  Each is a one-node model
run by mlrt and by onnxruntime (CPU, graph optimizations off), compared within the op's
tolerance (`Op.tolerance`: exact, or one unit of the quantized type where float math may
round apart)."""

from __future__ import annotations

import numpy as np
import pytest

import mlrt
from tests.native.ops.test_contrib_qlinear import EIGHT, _all_values, _model, _q, _run_ort, _scale, _zp, check
from tests.oracle import run_mlrt

ort = pytest.importorskip("onnxruntime")

rng = np.random.default_rng(22)
SIZES = (1, 13, 127)
F = np.float32


# -- QGemm ------------------------------------------------------------------------------------------

GEMM_TYPES = [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)]


def _gemm_inputs(at, bt, m, k, n, trans_a=0, trans_b=0, per_column=False, c_shape=None, out="q"):
    a = _q((k, m) if trans_a else (m, k), at)
    b = _q((n, k) if trans_b else (k, n), bt)
    b_s = rng.uniform(0.001, 0.01, n).astype(F) if per_column else np.array(0.004, F)
    b_z = (np.zeros if bt == np.int8 else lambda s, t: np.full(s, 120, t))(b_s.shape, bt)
    if per_column and bt == np.uint8:
        b_z = rng.integers(100, 150, n).astype(bt)
    ins = [(a, False), (_scale(0.01, 0.05), True), (_zp(at), True), (b, True), (b_s, True), (b_z, True)]
    ins.append(None if c_shape is None else (rng.integers(-3000, 3000, c_shape).astype(np.int32), True))
    if out == "q":
        ins += [(_scale(0.05, 0.3), True), (_zp(at), True)]
    elif out == "float_scaled":
        ins += [(_scale(0.05, 0.3), True)]
    while ins and ins[-1] is None:
        ins.pop()
    return ins


@pytest.mark.parametrize("types", GEMM_TYPES)
@pytest.mark.parametrize("mkn", [(1, 1, 1), (13, 127, 9), (2, 13, 127), (127, 3, 13)])
@pytest.mark.parametrize("trans", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_qgemm(types, mkn, trans):
    m, k, n = mkn
    got, _ = check("QGemm", _gemm_inputs(*types, m, k, n, *trans), {"transA": trans[0], "transB": trans[1]})
    assert got.dtype == types[0] and got.shape == (m, n)


@pytest.mark.parametrize("types", GEMM_TYPES)
@pytest.mark.parametrize("c_shape", [None, (), (1,), (9,), (1, 9), (13, 1), (13, 9)])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 0.37])
def test_qgemm_bias_scales_alpha(types, c_shape, per_column, alpha):
    check("QGemm", _gemm_inputs(*types, 13, 21, 9, per_column=per_column, c_shape=c_shape), {"alpha": alpha})


@pytest.mark.parametrize("types", GEMM_TYPES)
@pytest.mark.parametrize("out", ["float", "float_scaled"])
@pytest.mark.parametrize("per_column", [False, True])
def test_qgemm_float_output(types, out, per_column):
    ins = _gemm_inputs(*types, 7, 130, 13, trans_b=1, per_column=per_column, c_shape=(13,), out=out)
    got, want = check("QGemm", ins, {"alpha": 0.5, "transB": 1})
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_qgemm_saturation():
    for at, bt in GEMM_TYPES:
        info = np.iinfo(at)
        a = np.stack([np.full(300, np.iinfo(at).max, at), np.full(300, np.iinfo(at).min, at)])
        b = np.concatenate([np.full((300, 1), np.iinfo(bt).max, bt), np.full((300, 1), np.iinfo(bt).min, bt)], 1)
        zero_a, zero_b = np.array(0, at), np.array(0, bt)
        got, _ = check("QGemm", [(a, False), (np.array(1.0, F), True), (zero_a, True), (b, True),
                                 (np.array(1.0, F), True), (zero_b, True), None, (np.array(1e-3, F), True),
                                 (zero_a, True)])
        assert {int(got.min()), int(got.max())} <= {info.min, info.max}


# -- QLinearSoftmax ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("shape,attrs", [((2, 13), {"opset": 13}), ((1, 3, 127), {"opset": 13}),
                                         ((3, 5, 7), {"opset": 13, "axis": 1}), ((3, 5, 7), {"opset": 13, "axis": 0}),
                                         ((1, 1), {"opset": 13}), ((4, 3, 9), {"opset": 12}),
                                         ((4, 3, 9), {"opset": 11, "axis": 2}), ((2, 3, 4), {"opset": 12, "axis": 0})])
def test_qlinear_softmax(dtype, shape, attrs):
    y_zp = np.array(-128, dtype) if dtype == np.int8 else np.array(0, dtype)
    for x_s in (0.02, 0.1, 1.0):
        x = _q(shape, dtype)
        check("QLinearSoftmax", [(x, False), (np.array(x_s, F), True), (_zp(dtype), True),
                                 (np.array(1 / 256, F), True), (y_zp, True)], attrs)


@pytest.mark.parametrize("dtype", EIGHT)
def test_qlinear_softmax_every_value_and_wrap(dtype):
    """Every input byte in one row; y scales and zero points that reach 255 and, for int8,
    wrap as onnxruntime's kernel does."""
    x = _all_values(dtype).reshape(1, -1)
    for y_s, y_z in ((1 / 255, 0), (1 / 256, 0), (0.01, 5), (1 / 300, 20)):
        got, _ = check("QLinearSoftmax", [(x, False), (np.array(0.05, F), True), (np.array(0, dtype), True),
                                          (np.array(y_s, F), True), (np.array(y_z, dtype), True)], {"opset": 13})
    x = np.array([[np.iinfo(dtype).max] + [np.iinfo(dtype).min] * 4], dtype)  # one value takes all
    for y_z in ((-128, 0, 100) if dtype == np.int8 else (0, 100)):
        check("QLinearSoftmax", [(x, False), (np.array(1.0, F), True), (np.array(0, dtype), True),
                                 (np.array(1 / 256, F), True), (np.array(y_z, dtype), True)], {"opset": 13})


# -- QLinearAveragePool ------------------------------------------------------------------------------

POOL_CASES = [
    dict(x=(1, 3, 13), attrs={"kernel_shape": [3]}),
    dict(x=(2, 4, 13), attrs={"kernel_shape": [4], "strides": [2], "pads": [1, 2], "count_include_pad": 1}),
    dict(x=(1, 5, 7, 9), attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    dict(x=(2, 3, 13, 11), attrs={"kernel_shape": [2, 3], "strides": [2, 2], "pads": [0, 1, 1, 2],
                                  "count_include_pad": 1}),
    dict(x=(1, 2, 9, 8), attrs={"kernel_shape": [3, 2], "strides": [2, 3], "ceil_mode": 1}),
    dict(x=(1, 3, 7, 7), attrs={"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    dict(x=(1, 127, 3, 3), attrs={"kernel_shape": [2, 2]}),
    dict(x=(1, 2, 5, 4, 6), attrs={"kernel_shape": [2, 3, 2], "pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 2]}),
    dict(x=(2, 3, 5, 6), attrs={"kernel_shape": [5, 6]}),  # the whole image: QLinearGlobalAveragePool
]


@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_average_pool(dtype, case, channels_last):
    c = POOL_CASES[case]
    x = _q(c["x"], dtype)
    if channels_last:
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    check("QLinearAveragePool", [(x, False), (_scale(), True), (_zp(dtype), True), (_scale(), True),
                                 (_zp(dtype), True)], {**c["attrs"], "channels_last": channels_last})


def test_qlinear_average_pool_saturation():
    for dtype in EIGHT:
        info = np.iinfo(dtype)
        x = np.concatenate([np.full((1, 1, 4, 4), info.max, dtype), np.full((1, 1, 4, 4), info.min, dtype)], 1)
        got, _ = check("QLinearAveragePool", [(x, False), (np.array(1.0, F), True), (np.array(0, dtype), True),
                                              (np.array(0.01, F), True), (np.array(0, dtype), True)],
                       {"kernel_shape": [2, 2]})
        assert (got[0, 0] == info.max).all() and (got[0, 1] == info.min).all()


# -- QLinearWhere -----------------------------------------------------------------------------------

WHERE_SHAPES = [((2, 3, "n"), (2, 3, "n"), (2, 3, "n")), (("n",), (2, 1, "n"), (3, 1)), ((), (4, "n"), ("n",)),
                ((2, 1, 1), (1, "n"), ())]


@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shapes", WHERE_SHAPES)
def test_qlinear_where(dtype, n, shapes):
    sc, sx, sy = (tuple(n if d == "n" else d for d in s) for s in shapes)
    cond = np.asarray(rng.random(sc) < 0.5)
    z_s, z_z = _scale(), _zp(dtype)
    for same in (False, True):  # X shares Z's scale and zero point: copied
        ins = [(cond, False), (_q(sx, dtype), False), (z_s if same else _scale(), True),
               (z_z if same else _zp(dtype), True), (_q(sy, dtype), False), (_scale(), True), (_zp(dtype), True),
               (z_s, True), (z_z, True)]
        check("QLinearWhere", ins)


def test_qlinear_where_saturation():
    for dtype in EIGHT:
        x = _all_values(dtype)
        cond = np.arange(x.size) % 3 == 0
        check("QLinearWhere", [(cond, False), (x, False), (np.array(0.5, F), True), (_zp(dtype), True), (x[::-1].copy(), False),
                               (np.array(0.001, F), True), (_zp(dtype), True), (np.array(0.01, F), True),
                               (_zp(dtype), True)])


# -- NhwcMaxPool ------------------------------------------------------------------------------------

MAXPOOL_CASES = [
    dict(x=(1, 13, 3), attrs={"kernel_shape": [3]}),
    dict(x=(2, 13, 4), attrs={"kernel_shape": [4], "strides": [2], "pads": [1, 2]}),
    dict(x=(1, 7, 9, 5), attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    dict(x=(2, 13, 11, 3), attrs={"kernel_shape": [2, 3], "strides": [2, 2], "dilations": [2, 1],
                                  "pads": [0, 1, 1, 2]}),
    dict(x=(1, 9, 8, 2), attrs={"kernel_shape": [3, 2], "strides": [2, 3], "ceil_mode": 1}),
    dict(x=(1, 7, 7, 127), attrs={"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    dict(x=(1, 5, 4, 6, 2), attrs={"kernel_shape": [2, 3, 2], "pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 2]}),
]


@pytest.mark.parametrize("dtype", EIGHT)
@pytest.mark.parametrize("case", range(len(MAXPOOL_CASES)))
def test_nhwc_max_pool(dtype, case):
    c = MAXPOOL_CASES[case]
    got, want = check("NhwcMaxPool", [(_q(c["x"], dtype), False)], c["attrs"])
    np.testing.assert_array_equal(got, want)


# -- empty tensors and refusals -------------------------------------------------------------------------

def test_empty_tensors():
    f, u = np.array(0.1, F), np.array(3, np.uint8)
    model, feeds = _model("QLinearSoftmax", [(np.zeros((0, 5), np.uint8), False), (f, True), (u, True), (f, True),
                                             (u, True)], {"opset": 13})
    assert run_mlrt(model, feeds)[0].shape == (0, 5)
    model, feeds = _model("QGemm", [(np.zeros((0, 4), np.uint8), False), (f, True), (u, True),
                                    (np.ones((4, 3), np.uint8), True), (f, True), (u, True), None, (f, True),
                                    (u, True)])
    assert run_mlrt(model, feeds)[0].shape == (0, 3)
    model, feeds = _model("NhwcMaxPool", [(np.zeros((0, 5, 5, 3), np.int8), False)], {"kernel_shape": [2, 2]})
    assert run_mlrt(model, feeds)[0].shape == (0, 4, 4, 3)
    model, feeds = _model("QLinearWhere", [(np.zeros((0, 2), bool), False), (np.zeros((2,), np.uint8), False), (f, True),
                                           (u, True), (np.zeros((1,), np.uint8), False), (f, True), (u, True),
                                           (f, True), (u, True)])
    assert run_mlrt(model, feeds)[0].shape == (0, 2)


def _fails(op_type, inputs, attrs=None):
    model, feeds = _model(op_type, inputs, attrs)
    with pytest.raises(mlrt.MlrtError) as e:
        run_mlrt(model, feeds)
    return str(e.value)


def test_refusals():
    f, u, s = np.array(0.1, F), np.array(3, np.uint8), np.array(3, np.int8)
    a8, au = _q((2, 3), np.int8), _q((2, 3), np.uint8)
    bu, b8 = _q((3, 4), np.uint8), _q((3, 4), np.int8)
    assert "int8 A" in _fails("QGemm", [(a8, False), (f, True), (s, True), (bu, True), (f, True), (u, True)])
    assert "multiply" in _fails("QGemm", [(au, False), (f, True), (u, True), (_q((4, 3), np.uint8), True), (f, True),
                                          (u, True)])
    assert "N = 4" in _fails("QGemm", [(au, False), (f, True), (u, True), (b8, True), (np.ones(3, F), True),
                                       (np.zeros(3, np.int8), True)])
    assert "int32" in _fails("QGemm", [(au, False), (f, True), (u, True), (b8, True), (f, True), (s, True),
                                       (np.ones(4, F), True)])
    assert "broadcast" in _fails("QGemm", [(au, False), (f, True), (u, True), (b8, True), (f, True), (s, True),
                                           (np.ones((3, 4), np.int32), True)])
    assert "float" in _fails("QLinearSoftmax", [(au, False), (np.array(0.1, np.float64), True), (u, True), (f, True),
                                                (u, True)], {"opset": 13})
    assert "opset" in _fails("QLinearSoftmax", [(au, False), (f, True), (u, True), (f, True), (u, True)])
    assert "axis" in _fails("QLinearSoftmax", [(au, False), (f, True), (u, True), (f, True), (u, True)],
                            {"opset": 13, "axis": 2})
    assert "rank" in _fails("QLinearAveragePool", [(au, False), (f, True), (u, True), (f, True), (u, True)],
                            {"kernel_shape": [2]})
    assert "dilations" in _fails("QLinearAveragePool", [(_q((1, 2, 5, 5), np.uint8), False), (f, True), (u, True),
                                                        (f, True), (u, True)],
                                 {"kernel_shape": [2, 2], "dilations": [2, 2]})
    assert "bool" in _fails("QLinearWhere", [(au, False), (au, False), (f, True), (u, True), (au, False), (f, True),
                                             (u, True), (f, True), (u, True)])
    assert "differ" in _fails("QLinearWhere", [(au > 3, False), (au, False), (f, True), (u, True), (a8, False),
                                               (f, True), (s, True), (f, True), (u, True)])
    assert "broadcast" in _fails("QLinearWhere", [(np.ones(5, bool), False), (au, False), (f, True), (u, True),
                                                  (au, False), (f, True), (u, True), (f, True), (u, True)])
    assert "type" in _fails("NhwcMaxPool", [(np.ones((1, 5, 5, 3), F), False)], {"kernel_shape": [2, 2]})
    assert "larger" in _fails("NhwcMaxPool", [(np.ones((1, 2, 2, 3), np.uint8), False)], {"kernel_shape": [3, 3]})
