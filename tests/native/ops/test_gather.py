"""Gather, GatherElements, GatherND against onnx.reference; out-of-range indices are errors."""

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from oracle import check_node, make_model, run_mlrt
from test_copy import DTYPES, data

I64 = np.int64


def fails(op, inputs, attrs=None):
    with pytest.raises(mlrt.InvalidArgument, match="out of range"):
        run_mlrt(make_model(op, inputs, attrs), inputs)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("ind_shape", [(1,), (4,), (2, 3), (0,), (13,)])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gather(axis, ind_shape, itype):
    x = data((5, 6, 7))
    n = x.shape[axis]
    ind = np.random.default_rng(1).integers(-n, n, ind_shape).astype(itype)
    check_node("Gather", [x, ind], {"axis": axis})


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_types(dtype):
    check_node("Gather", [data((127, 3), dtype), np.array([[0, 126], [-1, 5]], I64)])
    check_node("Gather", [data((13,), dtype), np.array([12, 0, -13], I64)])


def test_gather_scalar_index():
    check_node("Gather", [data((5, 4)), np.array(-2, I64)], {"axis": 1})


def test_gather_scalar_index_folded():
    """Shape -> Gather(scalar) chains run through run_eager at plan time (constant folding)."""
    d = np.arange(20, dtype=np.float32).reshape(5, 4)
    node = helper.make_node("Gather", ["d", "i"], ["y"], axis=1)
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", 1, None)],
                              initializer=[numpy_helper.from_array(d, "d"),
                                           numpy_helper.from_array(np.array(-2, I64), "i")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    np.testing.assert_array_equal(run_mlrt(model, [])[0], d[:, -2])


def test_gather_large_rows():
    check_node("Gather", [data((3000, 64)), np.random.default_rng(2).integers(0, 3000, (4000,)).astype(I64)])


@pytest.mark.parametrize("index", [5, -6, 100, -2 ** 40])
def test_gather_out_of_range(index):
    fails("Gather", [data((5, 2)), np.array([0, index], I64)])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_gather_elements(axis):
    x = data((4, 5, 6))
    ind_shape = list(x.shape)
    if axis >= 0:  # onnx.reference checks the other dimensions against index -1 literally
        ind_shape[axis] = 7
    n = x.shape[axis]
    ind = np.random.default_rng(3).integers(-n, n, ind_shape).astype(I64)
    check_node("GatherElements", [x, ind], {"axis": axis})


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_elements_types(dtype):
    check_node("GatherElements", [data((3, 13), dtype), np.array([[0, 12], [-1, 1], [2, 2]], np.int32)], {"axis": 1})


def test_gather_elements_bad():
    fails("GatherElements", [data((3, 3)), np.array([[0, 3]], I64)], {"axis": 1})
    with pytest.raises(mlrt.MlrtError):
        args = [data((3, 3)), np.zeros((4, 1), I64)]
        run_mlrt(make_model("GatherElements", args, {"axis": 1}), args)


@pytest.mark.parametrize("batch_dims,data_shape,ind", [
    (0, (2, 2), [[0, 0], [1, 1]]), (0, (2, 2), [[1], [0]]), (0, (2, 2, 2), [[0, 1], [1, 0]]),
    (0, (2, 2, 2), [[[0, 1]], [[1, 0]]]), (1, (2, 2, 2), [[1], [0]]), (1, (2, 3, 4), [[[1, -1]], [[0, 2]]]),
    (2, (2, 3, 4, 5), np.zeros((2, 3, 7, 1), int)), (0, (4, 3), np.zeros((0, 1), int))])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_gather_nd(batch_dims, data_shape, ind, dtype):
    check_node("GatherND", [data(data_shape, dtype), np.array(ind, I64)], {"batch_dims": batch_dims})


def test_gather_nd_opset11():
    check_node("GatherND", [data((2, 3, 4)), np.array([[1, 2], [0, -1]], I64)], opset=11)


def test_gather_nd_bad():
    fails("GatherND", [data((2, 3)), np.array([[1, 3]], I64)])
    fails("GatherND", [data((2, 3)), np.array([[-3, 0]], I64)])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("GatherND", [data((2, 3)), np.zeros((1, 3), I64)]), [data((2, 3)), np.zeros((1, 3), I64)])
