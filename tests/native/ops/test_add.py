"""Add/Sub/Mul/Div/Sum/Max/Min/Mean against onnx.reference: broadcasting, edge sizes and values."""

import numpy as np
import pytest

from oracle import EDGE_SIZES, EDGE_VALUES, check_node

rng = np.random.default_rng(0)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_binary_sizes(op, n):
    a = rng.standard_normal((n,)).astype(np.float32)
    b = rng.standard_normal((n,)).astype(np.float32) + 3
    check_node(op, [a, b])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (5, 1, 1)), ((), (3, 2)),
                                    ((0, 3), (3,)), ((13, 127), (13, 1))])
def test_binary_broadcast(op, shapes):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32) + 3
    check_node(op, [a, b])


# the walk merges dimensions every operand steps through as one and cuts long rows
# (src/nditer.h): a per-channel constant over planes, a scalar over a long row (cut into
# pieces), a row of prime length (not cut), a constant in the middle, unit dimensions
# between, a column broadcast along long rows
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@pytest.mark.parametrize("shapes", [((1, 32, 30, 30), (32, 1, 1)), ((2, 3, 40000), ()), ((65537,), (1,)),
                                    ((4, 5, 6), (5, 1)), ((3, 1, 1, 7), (1, 2, 1, 7)), ((2, 70000), (2, 1))])
def test_binary_walks(op, shapes):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32) + 3
    check_node(op, [a, b])
    check_node(op, [b, a])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float64])
def test_binary_types(op, dtype):
    a = rng.integers(1, 50, (4, 5)).astype(dtype)
    b = rng.integers(1, 7, (5,)).astype(dtype)
    check_node(op, [a, b])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_binary_edge_values(op):
    a = np.repeat(EDGE_VALUES, len(EDGE_VALUES))
    b = np.tile(EDGE_VALUES, len(EDGE_VALUES))
    check_node(op, [a, b])


@pytest.mark.parametrize("op", ["Sum", "Max", "Min", "Mean"])
@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_variadic(op, count):
    shapes = [(2, 3, 4), (3, 1), (4,), (1, 1, 4), (2, 1, 1)][:count]
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    check_node(op, inputs)


def test_variadic_nan_propagates():
    a = np.array([1.0, np.nan, 3.0], np.float32)
    b = np.array([np.nan, 2.0, 1.0], np.float32)
    check_node("Max", [a, b])
    check_node("Min", [a, b])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"])
def test_float16(op):
    """Half precision: computed in float, rounded back to float16 per element (as numpy does)."""
    a = rng.standard_normal((3, 1, 5)).astype(np.float16)
    # (onnx.reference's Mean accumulates in place and cannot broadcast: same shapes there)
    b = (rng.standard_normal((3, 1, 5) if op == "Mean" else (4, 1)) + 3).astype(np.float16)
    check_node(op, [a, b], rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("op", ["Add", "Mul", "Max"])
def test_bfloat16(op):
    import ml_dtypes
    a = rng.standard_normal((2, 7)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((7,)).astype(ml_dtypes.bfloat16)
    got = check_node(op, [a, b], rtol=1e-2, atol=1e-2)[0]
    assert got.dtype == a.dtype
