"""Pow and Mod (pow.c) against onnx.reference: broadcasting, mixed base/exponent
types, edge values, integer sign rules and division by zero, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


# -- Pow -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_edge_values(dtype):
    a = np.repeat(EDGE_VALUES, len(EDGE_VALUES)).astype(dtype)
    b = np.tile(EDGE_VALUES, len(EDGE_VALUES)).astype(dtype)
    check_node("Pow", [a, b])
    check_node("Pow", [np.array([-8, -2, 0, 0, 2, 1, -1], dtype), np.array([1 / 3, 0.5, 0, -1, -1074, np.nan, np.inf], dtype)])


@pytest.mark.parametrize("shapes", [((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3, 2)), ((3,), ()), ((0, 3), (3,)),
                                    ((13, 127), (13, 1))])
def test_pow_broadcast(shapes):
    a = rng.uniform(0.1, 3, shapes[0]).astype(np.float32)
    b = rng.uniform(-3, 3, shapes[1]).astype(np.float32)
    check_node("Pow", [a, b])


def test_pow_sizes():
    for n in EDGE_SIZES:
        check_node("Pow", [rng.uniform(0, 4, n).astype(np.float32), np.array(2.0, np.float32)])
    check_node("Pow", [EDGE_VALUES.reshape(1, 13), np.array([2.0], np.float32)])   # the x*x path
    for n in (1, 13, 127, 4099):  # the x*x*x path (within an ulp of powf: the op's tolerance)
        check_node("Pow", [rng.uniform(-4, 4, n).astype(np.float32), np.array(3.0, np.float32)])
    check_node("Pow", [EDGE_VALUES.reshape(1, 13), np.array([3.0], np.float32)])


@pytest.mark.parametrize("base,expo", [(np.float32, np.float64), (np.float32, np.int64), (np.float32, np.int32),
                                       (np.float64, np.float32), (np.float64, np.int8), (np.float32, np.uint8),
                                       (np.float16, np.float16), (np.float16, np.float32), (np.float16, np.int64)])
def test_pow_mixed_float_base(base, expo):
    a = rng.uniform(-3, 3, (4, 5)).astype(base)
    b = rng.integers(0, 4, (5,)).astype(expo)
    check_node("Pow", [a, b], rtol=2e-3 if base == np.float16 else None)


@pytest.mark.parametrize("base,expo", [(np.int32, np.int32), (np.int64, np.int64), (np.int32, np.int64),
                                       (np.int64, np.uint8), (np.int32, np.float32), (np.int64, np.float64)])
def test_pow_integer_base(base, expo):
    a = rng.integers(-9, 10, (4, 6)).astype(base)
    b = rng.integers(0, 6, (6,)).astype(expo)
    check_node("Pow", [a, b])
    # wrapping powers and a fractional exponent truncated back to the base's type
    check_node("Pow", [np.array([3, -3, 2, 7], base), np.array([39, 41, 70, 5], np.int64)])
    check_node("Pow", [np.array([9, 10, 2, 7], base), np.array([0.5, 1.5, 0.25, -1], np.float32)])


def test_pow_opset1_axis_broadcast():
    a = rng.uniform(0, 2, (2, 3, 4)).astype(np.float32)
    b = rng.uniform(0, 2, (3,)).astype(np.float32)
    got = run_mlrt(make_model("Pow", [a, b], {"broadcast": 1, "axis": 1}, opset=1), [a, b])[0]
    np.testing.assert_allclose(got, check_node("Pow", [a, b.reshape(3, 1)], opset=7)[0], rtol=1e-6)


def test_pow_bad_input():
    a = np.ones(3, np.bool_)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Pow", [a, a]), [a, a])
    x, y = np.ones((2, 3), np.float32), np.ones((2,), np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Pow", [x, y]), [x, y])


# -- Mod -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_mod_signed(fmod, dtype):
    a = np.array([-7, -7, 7, 7, 0, -6, 6, 5, np.iinfo(dtype).min, np.iinfo(dtype).min], dtype)
    b = np.array([3, -3, 3, -3, 5, 3, -3, 0, -1, 3], dtype)
    with np.errstate(all="ignore"):
        check_node("Mod", [a, b], {"fmod": fmod})
    check_node("Mod", [rng.integers(-50, 50, (4, 5)).astype(dtype), rng.integers(1, 9, (5,)).astype(dtype)], {"fmod": fmod})


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_mod_unsigned(fmod, dtype):
    a = np.array([7, 7, 0, 200, 5], dtype)
    b = np.array([3, 9, 5, 7, 0], dtype)
    check_node("Mod", [a, b], {"fmod": fmod})


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_mod_float(fmod, dtype):
    a = np.array([-7.5, -7.5, 7.5, 7.5, 0.0, -0.0, 6.0, -6.0, 5.0, np.inf, np.nan, 1.0], dtype)
    b = np.array([2.0, -2.0, 2.0, -2.0, 3.0, 3.0, -3.0, 3.0, 0.0, 2.0, 2.0, np.inf], dtype)
    check_node("Mod", [a, b], {"fmod": fmod})
    x = rng.uniform(-10, 10, (3, 13)).astype(dtype)
    y = rng.uniform(0.5, 3, (13,)).astype(dtype) * np.where(np.arange(13) % 2, 1, -1).astype(dtype)
    check_node("Mod", [x, y], {"fmod": fmod}, rtol=1e-3 if dtype == np.float16 else None)


def test_mod_sizes_and_shapes():
    for n in EDGE_SIZES:
        check_node("Mod", [rng.integers(-100, 100, n).astype(np.int32), np.array(7, np.int32)])
    check_node("Mod", [np.array(-7, np.int64), np.array(3, np.int64)])
    check_node("Mod", [np.zeros((0, 3), np.int64), np.ones((3,), np.int64)])


def test_mod_bad_input():
    a, b = np.ones(3, np.int32), np.ones(3, np.int64)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Mod", [a, b]), [a, b])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Mod", [a, a], {"fmod": 2}), [a, a])
