"""Unary math ops (unary.c) against onnx.reference: every op on float32/float64 edge
values and sizes, float16, integer Abs/Neg/Sign, IsNaN/IsInf attributes, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)

FLOAT_OPS = ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan",
             "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Sigmoid", "Tanh", "Softplus",
             "Softsign"]

# inputs inside each op's domain (the edge-value tests cover the outside)
DOMAIN = {"Log": (0.01, 10), "Sqrt": (0, 10), "Asin": (-1, 1), "Acos": (-1, 1), "Atanh": (-0.99, 0.99),
          "Acosh": (1, 10), "Exp": (-20, 20), "Sinh": (-20, 20), "Cosh": (-20, 20), "Tan": (-1.5, 1.5)}

# values with large magnitudes that libm and numpy may reduce differently (Sin/Cos/Tan of 3.4e38)
# still agree within tolerance; only denormal inputs of Reciprocal overflow identically.
EDGE = np.concatenate([EDGE_VALUES, np.array([0.49999997, 1.5, 2.5, -3.5, 88.7, -88.7, 1e-7, 20.0, -20.0], np.float32)])


def _edge(dtype):
    with np.errstate(over="ignore"):  # +-3.4e38 become +-inf in float16
        return EDGE.astype(dtype)


def _uniform(op, shape, dtype):
    lo, hi = DOMAIN.get(op, (-5, 5))
    return rng.uniform(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize("op", FLOAT_OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_edge_values(op, dtype):
    check_node(op, [EDGE.astype(dtype)])


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_sizes_and_shapes(op):
    for n in EDGE_SIZES:
        check_node(op, [_uniform(op, (n,), np.float32)])
    x0 = _uniform(op, (), np.float32)                         # rank 0 (onnx.reference's Softsign
    got = run_mlrt(make_model(op, [x0]), [x0])[0]             # fails on it: compare with shape [1])
    assert got.shape == () and np.allclose(got, check_node(op, [x0.reshape(1)])[0][0], equal_nan=True)
    check_node(op, [_uniform(op, (0, 3), np.float32)])        # empty
    check_node(op, [_uniform(op, (2, 3, 5, 7), np.float64)])


@pytest.mark.parametrize("op", ["Abs", "Neg", "Exp", "Sqrt", "Round", "Sigmoid", "Tanh", "Erf", "Softplus", "Cos"])
def test_float16(op):
    x = _uniform(op, (3, 41), np.float16)
    check_node(op, [x], rtol=2e-3, atol=1e-3)


# Erf's float32 loop is a polynomial (fastmath.h, at most 2.5 ulp over every float32):
# a dense grid is held to 3 ulp, and the values where erf is exact must come out exact
ERF_EXACT = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 10.0, -10.0, 4.0, -4.0, 3.4e38, -3.4e38], np.float32)


def _erf_grid():
    tiny = np.geomspace(1e-45, 1e-3, 301, dtype=np.float64)
    return np.concatenate([np.linspace(-10, 10, 8001), tiny, -tiny, [0.921875, -0.921875, 0.9218749]]).astype(np.float32)


def test_erf_float32_accuracy():
    check_node("Erf", [_erf_grid()], rtol=3.6e-7, atol=1e-45)


@pytest.mark.parametrize("n", [1, 13, 127, 1000])
def test_erf_float32_edge_values_at_every_lane(n):
    x = np.resize(np.concatenate([ERF_EXACT, [1e-40, -1e-40, 1e-7, 0.5]]).astype(np.float32), n)
    got = check_node("Erf", [x], rtol=3.6e-7, atol=1e-45)[0]
    expected = np.resize(np.array([1, -1, np.nan, 0, -0.0, 1, -1, 1, -1, 1, -1], np.float32), min(n, 11))
    np.testing.assert_array_equal(got[:11], expected)
    assert list(np.signbit(got[:min(n, 11)])) == list(np.signbit(expected))


def test_round_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.5000002, 1e20, -0.0], np.float32)
    got = check_node("Round", [x])[0]
    np.testing.assert_array_equal(got[:6], [0, 2, 2, -0, -2, -2])


@pytest.mark.parametrize("op", ["Abs", "Neg", "Sign"])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_signed_integers(op, dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, -1, 7, -7, info.max, info.min, info.min + 1], dtype)
    check_node(op, [x])


@pytest.mark.parametrize("op", ["Abs", "Sign"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_integers(op, dtype):
    x = np.array([0, 1, 7, np.iinfo(dtype).max], dtype)
    check_node(op, [x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_isnan(dtype):
    x = _edge(dtype).reshape(2, 11)
    got = check_node("IsNaN", [x])[0]
    assert got.dtype == np.bool_ and got.sum() == 1


@pytest.mark.parametrize("neg", [0, 1])
@pytest.mark.parametrize("pos", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_isinf(neg, pos, dtype):
    x = _edge(dtype)
    got = check_node("IsInf", [x], {"detect_negative": neg, "detect_positive": pos})[0]
    assert got.dtype == np.bool_ and got.any() == bool(neg or pos)


def test_isinf_rank0_and_empty():
    check_node("IsInf", [np.array(np.inf, np.float32)])
    check_node("IsNaN", [np.zeros((2, 0), np.float64)])


def test_big_tensor_runs_in_parallel():
    x = rng.standard_normal((300, 1001)).astype(np.float32)
    check_node("Tanh", [x])
    check_node("Abs", [x])


@pytest.mark.parametrize("op", ["Exp", "Sqrt", "IsNaN"])
def test_integer_input_is_refused(op):
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model(op, [x]), [x])


def test_unsigned_neg_is_refused():
    x = np.arange(4, dtype=np.uint8)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Neg", [x]), [x])
