"""CumSum against onnx.reference: axis input, exclusive, reverse, types, sizes."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


def cumsum(x, axis, **attrs):
    return check_node("CumSum", [x, np.array(axis, np.int64)], attrs)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumsum_flags(axis, exclusive, reverse):
    cumsum(rng.standard_normal((3, 4, 5)).astype(np.float32), axis, exclusive=exclusive, reverse=reverse)


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_cumsum_sizes(n):
    x = rng.standard_normal((2, n)).astype(np.float32)
    cumsum(x, 1)
    cumsum(x, 0, reverse=1)
    cumsum(rng.standard_normal((2, 3, n)).astype(np.float32), 1, exclusive=1)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float64])
def test_cumsum_types(dtype):
    x = rng.integers(0, 100, (4, 6)).astype(dtype)
    cumsum(x, 1, exclusive=1)
    cumsum(x, 0, reverse=1)


def test_cumsum_axis_types_and_rank():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    check_node("CumSum", [x, np.array(1, np.int32)])          # int32 axis
    one = np.array([0], np.int64)                              # a 1-element axis is accepted too
    np.testing.assert_array_equal(run_mlrt(make_model("CumSum", [x, one]), [x, one])[0], np.cumsum(x, axis=0))
    check_node("CumSum", [rng.standard_normal(7).astype(np.float32), np.array(0)], opset=11)


def test_cumsum_edge_values_and_wrap():
    cumsum(np.tile(EDGE_VALUES, (2, 1)), 1)
    cumsum(np.array([2**31 - 1, 1, 5], np.int32), 0)        # wraps like the reference


def test_cumsum_large_and_empty():
    cumsum(rng.standard_normal((3, 100, 700)).astype(np.float32), 1, reverse=1)
    cumsum(np.zeros((0, 3), np.float32), 1)
    cumsum(np.zeros((3, 0), np.float32), 1, exclusive=1)


def test_cumsum_bad_axis():
    with pytest.raises(mlrt.MlrtError):
        cumsum(np.zeros((2, 3), np.float32), 2)
    with pytest.raises(mlrt.MlrtError):
        cumsum(np.array(1.0, np.float32), 0)
