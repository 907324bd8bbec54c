"""ConstantOfShape, Range, EyeLike, OneHot against onnx.reference."""

import numpy as np
import pytest
from onnx import TensorProto, numpy_helper

import mlrt
from oracle import check_node, make_model, run_mlrt
from test_copy import DTYPES, data

I64 = np.int64


@pytest.mark.parametrize("shape", [[], [0], [3], [2, 13], [4, 0, 2]])
@pytest.mark.parametrize("value", [None, np.array([7], np.int32), np.array([np.nan], np.float16),
                                   np.array([True]), np.array([-2.5], np.float64), np.array([2 ** 60], np.uint64)])
def test_constant_of_shape(shape, value):
    attrs = {} if value is None else {"value": numpy_helper.from_array(value)}
    check_node("ConstantOfShape", [np.array(shape, I64)], attrs)


def test_constant_of_shape_bad():
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("ConstantOfShape", [np.array([2, -1], I64)]), [np.array([2, -1], I64)])


@pytest.mark.parametrize("start,limit,delta", [(0, 10, 1), (10, 4, -2), (3, 9, 3), (5, 5, 1), (5, 1, 1), (-7, 100, 13)])
@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.float32, np.float64])
def test_range(start, limit, delta, dtype):
    check_node("Range", [np.array(start, dtype), np.array(limit, dtype), np.array(delta, dtype)])


@pytest.mark.parametrize("opset", [11, 27])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_range_fractional(opset, dtype):
    for start, limit, delta in [(0.1, 100.3, 0.37), (1.0, -2.0, -0.3), (-3.0, 17.0, 0.3), (2000.0, 2100.0, 1.1)]:
        check_node("Range", [np.array(start, dtype), np.array(limit, dtype), np.array(delta, dtype)], opset=opset)


def test_range_bad():
    args = [np.array(0, np.float32), np.array(1, np.float32), np.array(0, np.float32)]
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Range", args), args)


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (0, 3), (1, 1)])
@pytest.mark.parametrize("k", [0, 1, -1, 3, -7])
def test_eye_like(shape, k):
    check_node("EyeLike", [data(shape)], {"k": k})


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT16, TensorProto.BOOL, TensorProto.INT8, TensorProto.UINT64,
                                   TensorProto.DOUBLE])
def test_eye_like_dtype(dtype):
    check_node("EyeLike", [data((3, 4), np.int32)], {"dtype": dtype, "k": 1})


def test_eye_like_bad():
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("EyeLike", [data((3,))]), [data((3,))])


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
@pytest.mark.parametrize("itype", [np.int64, np.int32, np.float32, np.uint8, np.float64])
def test_one_hot(axis, itype):
    ind = np.array([[0, 3, -1], [9, 2, -10]]).astype(itype) if np.dtype(itype).kind != "u" else \
        np.array([[0, 3, 1], [9, 2, 200]], itype)
    check_node("OneHot", [ind, np.array(10, I64), np.array([-1.5, 4.0], np.float32)], {"axis": axis})


@pytest.mark.parametrize("vtype", DTYPES)
def test_one_hot_value_types(vtype):
    args = [np.array([1, 0, 4, 5, -5], I64), np.array(5.0, np.float32), np.array([0, 1]).astype(vtype)]
    if np.dtype(vtype) == np.bool_:  # onnx.reference computes on - off, which numpy refuses for bools
        got = run_mlrt(make_model("OneHot", args), args)[0]
        np.testing.assert_array_equal(got, np.eye(5, dtype=bool)[[1, 0, 4, 0, 0]] & (args[0] < 5)[:, None])
        return
    check_node("OneHot", args)


def test_one_hot_fractional_indices_and_bad():
    check_node("OneHot", [np.array([0.5, 1.0, -1.0], np.float32), np.array(3, I64), np.array([0, 1], I64)])
    with pytest.raises(mlrt.MlrtError):
        args = [np.array([1], I64), np.array(3, I64), np.array([0, 1, 2], I64)]
        run_mlrt(make_model("OneHot", args), args)
