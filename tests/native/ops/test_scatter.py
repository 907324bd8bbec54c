"""ScatterElements (and Scatter), ScatterND against onnx.reference: reductions, duplicate
and negative indices, every type; out-of-range indices are errors."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt
from test_copy import DTYPES

I64 = np.int64
rng = np.random.default_rng(5)


def finite(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    return rng.integers(-5, 6, shape).astype(dtype) if dtype.kind in "if" else rng.integers(0, 9, shape).astype(dtype)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements(axis, reduction):
    x = finite((4, 5), np.float32)
    ind_shape = [3, 3]
    n = x.shape[axis]
    ind = rng.integers(-n, n, ind_shape).astype(I64)
    upd = finite(ind_shape, np.float32)
    check_node("ScatterElements", [x, ind, upd], {"axis": axis, "reduction": reduction})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_types(dtype, reduction):
    if np.dtype(dtype) == np.bool_ and reduction != "none":
        pytest.skip("onnx.reference combines bools with + and *, which numpy turns into or/and; checked below")
    x, upd = finite((3, 13), dtype), finite((3, 4), dtype)
    ind = np.array([[0, 12, 12, -1], [1, 1, 1, 1], [5, 6, 7, 8]], np.int32)
    check_node("ScatterElements", [x, ind, upd], {"axis": 1, "reduction": reduction})


def test_scatter_elements_bool_reductions():
    x = np.array([True, False, True, False])
    upd = np.array([True, True, False, False])
    ind = np.array([0, 1, 2, 3], I64)
    for reduction, expected in [("add", x | upd), ("max", x | upd), ("mul", x & upd), ("min", x & upd)]:
        got = run_mlrt(make_model("ScatterElements", [x, ind, upd], {"reduction": reduction}), [x, ind, upd])[0]
        np.testing.assert_array_equal(got, expected)


def test_scatter_deprecated():
    x, ind, upd = finite((3, 3), np.float32), np.array([[1, 0, 2], [0, 2, 1]], I64), finite((2, 3), np.float32)
    got = run_mlrt(make_model("Scatter", [x, ind, upd], {"axis": 0}, opset=10), [x, ind, upd])[0]
    expected = check_node("ScatterElements", [x, ind, upd], {"axis": 0})[0]  # onnx.reference lacks Scatter
    np.testing.assert_array_equal(got, expected)


def test_scatter_elements_out_of_range():
    x, upd = finite((3, 3), np.float32), finite((1, 2), np.float32)
    for bad in (3, -4):
        ind = np.array([[0, bad]], I64)
        with pytest.raises(mlrt.InvalidArgument, match="out of range"):
            run_mlrt(make_model("ScatterElements", [x, ind, upd], {"axis": 1}), [x, ind, upd])


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("case", [((4, 4, 4), [[0], [2]], (2, 4, 4)), ((4, 4, 4), [[0, 1], [-1, 2], [0, 1]], (3, 4)),
                                  ((8,), [[4], [3], [1], [7]], (4,)), ((3, 5), [[[0, 1], [2, 4]]], (1, 2)),
                                  ((3, 5), np.zeros((0, 2), int), (0,))])
def test_scatter_nd(reduction, case):
    shape, ind, upd_shape = case
    x = finite(shape, np.float32)
    check_node("ScatterND", [x, np.array(ind, I64), finite(upd_shape, np.float32)], {"reduction": reduction})


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int8, np.uint16, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_types(dtype, reduction):
    x = finite((5, 3), dtype)
    check_node("ScatterND", [x, np.array([[1], [1], [4]], I64), finite((3, 3), dtype)], {"reduction": reduction})


def test_scatter_nd_float16_rounding():
    x = np.full(4, 2049.0, np.float16)  # 2049 rounds to 2048 in float16: sums must round like numpy
    upd = np.array([1.0, 3.0, 0.5, 0.0009765625], np.float16)
    check_node("ScatterND", [x, np.array([[0], [1], [2], [3]], I64), upd], {"reduction": "add"})


def test_scatter_nd_bad():
    x = finite((3, 3), np.float32)
    ind, upd = np.array([[3, 0]], I64), finite((1,), np.float32)
    with pytest.raises(mlrt.InvalidArgument, match="out of range"):
        run_mlrt(make_model("ScatterND", [x, ind, upd]), [x, ind, upd])
    ind, upd = np.array([[0, 0]], I64), finite((2,), np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("ScatterND", [x, ind, upd]), [x, ind, upd])
