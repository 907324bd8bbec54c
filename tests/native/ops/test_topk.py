"""TopK against onnx.reference: k, axis, largest/smallest, ties, NaN, types, opsets."""

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, run_mlrt

rng = np.random.default_rng(0)


def topk(x, k, opset=None, **attrs):
    if opset == 1:
        return check_node("TopK", [x], dict(attrs, k=k), n_outputs=2, opset=1)
    return check_node("TopK", [x, np.array([k], np.int64)], attrs, n_outputs=2, opset=opset)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("k", [1, 3])
def test_topk_axes(axis, largest, k):
    topk(rng.standard_normal((3, 4, 5)).astype(np.float32), k, axis=axis, largest=largest)


@pytest.mark.parametrize("n", EDGE_SIZES)
@pytest.mark.parametrize("largest", [0, 1])
def test_topk_sizes(n, largest):
    x = rng.standard_normal((2, n)).astype(np.float32)
    for k in sorted({0, 1, n // 2, n}):
        topk(x, k, largest=largest)
    topk(np.ascontiguousarray(x.T), 1, axis=0, largest=largest)


@pytest.mark.parametrize("largest", [0, 1])
def test_topk_ties_and_nan(largest):
    ties = rng.integers(0, 3, (4, 50)).astype(np.float32)  # ties go to the lower index
    topk(ties, 20, largest=largest)
    topk(np.ascontiguousarray(ties.T), 10, axis=0, largest=largest)
    x = np.tile(EDGE_VALUES, (2, 1))  # NaN ranks above every number
    x[1, 3] = np.nan
    topk(x, 13, largest=largest)
    topk(x, 4, largest=largest)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   np.float64])
def test_topk_types(dtype):
    x = rng.integers(0, 100, (3, 40)).astype(dtype)
    topk(x, 7)
    topk(x, 7, largest=0)
    topk(x, 2, axis=0)


@pytest.mark.parametrize("opset", [1, 10, 11])
def test_topk_opsets(opset):
    topk(rng.standard_normal((3, 9)).astype(np.float32), 4, opset=opset)


def test_topk_unsorted_is_sorted():
    topk(rng.standard_normal((3, 30)).astype(np.float32), 5, sorted=0)


def test_topk_large():
    topk(rng.standard_normal((16, 5000)).astype(np.float32), 100)
    topk(rng.standard_normal((3, 300, 40)).astype(np.float32), 50, axis=1)


def test_topk_empty():
    topk(np.zeros((0, 5), np.float32), 2)
    topk(np.zeros((3, 0), np.float32), 0)


def test_topk_k_from_initializer():
    x = rng.standard_normal((4, 10)).astype(np.float32)
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, x.shape)],
                              [helper.make_empty_tensor_value_info("v"), helper.make_empty_tensor_value_info("i")],
                              [numpy_helper.from_array(np.array([3], np.int64), "k")])
    v, i = run_mlrt(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), [x])
    np.testing.assert_array_equal(i, np.argsort(-x, axis=1, kind="stable")[:, :3])
    np.testing.assert_array_equal(v, np.take_along_axis(x, i, axis=1))


@pytest.mark.parametrize("k", [6, -1])
def test_topk_bad_k(k):
    with pytest.raises(mlrt.MlrtError):
        topk(np.zeros((2, 5), np.float32), k)
