"""Activations and one-tensor math on OpenCL against the C kernels."""

import numpy as np
import pytest

from opencl_check import check_opencl
from oracle import EDGE_VALUES

UNARY = ["Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish",
         "ThresholdedRelu", "Mish", "Gelu", "Softplus", "Softsign", "Erf", "Exp", "Log", "Sqrt", "Abs", "Neg",
         "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
         "Cosh", "Asinh", "Acosh", "Atanh", "Clip"]
FLOATS = [np.float32, np.float16]


def _edge(dtype):
    with np.errstate(over="ignore"):
        return EDGE_VALUES.astype(dtype)  # inf, NaN, +-0, denormals, +-3.4e38 (inf in float16)


def _data(n, dtype, scale=3.0):
    return (np.random.default_rng(n).standard_normal(n) * scale).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("n", [1, 13, 127, 1000])
def test_unary(op, n, dtype):
    check_opencl(op, [_data(n, dtype)])  # (out-of-domain values give NaN on both sides)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY)
def test_edge_values(op, dtype):
    check_opencl(op, [_edge(dtype)])
    check_opencl(op, [np.linspace(-8, 8, 129, dtype=np.float32).astype(dtype)])  # round's halves, sign's zero


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op, attrs", [
    ("LeakyRelu", {"alpha": 0.2}), ("LeakyRelu", {"alpha": -1.5}), ("Elu", {"alpha": 0.5}),
    ("Selu", {"alpha": 1.5, "gamma": 2.0}), ("Celu", {"alpha": 2.5}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("ThresholdedRelu", {"alpha": 0.5}), ("ThresholdedRelu", {"alpha": -1.0}),
    ("Gelu", {"approximate": "none"}), ("Gelu", {"approximate": "tanh"})], ids=str)
def test_attributes(op, attrs, dtype):
    x = np.linspace(-6, 6, 50, dtype=np.float32).reshape(5, 10).astype(dtype)
    check_opencl(op, [x], attrs)
    check_opencl(op, [_edge(dtype)], attrs)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("opset, attrs", [(6, {}), (6, {"min": -1.0}), (6, {"max": 0.1}),
                                          (6, {"min": 0.1, "max": 2.5}), (1, {}), (1, {"min": -0.5})], ids=str)
def test_clip_attributes(opset, attrs, dtype):
    check_opencl("Clip", [_data(127, dtype)], attrs, opset=opset)
    check_opencl("Clip", [_edge(dtype)], attrs, opset=opset)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lo, hi", [(-1.0, 2.0), (-1.0, None), (None, 0.5), (None, None), (3.0, -3.0),
                                    (np.nan, 1.0)], ids=str)
def test_clip_inputs(lo, hi, dtype):
    x = _data(127, dtype)
    bounds = [None if b is None else np.array(b, dtype) for b in (lo, hi)]
    while bounds and bounds[-1] is None:
        bounds.pop()
    check_opencl("Clip", [x, *bounds], opset=13)
    check_opencl("Clip", [_edge(dtype), *bounds], opset=11)


@pytest.mark.parametrize("op", ["Relu", "Gelu", "Clip", "Exp"])
def test_empty(op):
    check_opencl(op, [np.zeros((0, 3), np.float32)])
    check_opencl(op, [np.zeros((4, 0), np.float16)])


def test_rank0_and_shapes():
    check_opencl("Sigmoid", [np.array(-0.7, np.float32)])
    check_opencl("Tanh", [_data(2 * 3 * 5 * 7, np.float32).reshape(2, 3, 5, 7)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY)
def test_mixed_lanes(op, dtype):
    """Huge, tiny and special values side by side in the kernels' vectors (PoCL's vector
    sin/cos/tan got small arguments wrong next to huge ones)."""
    rng = np.random.default_rng(5)
    with np.errstate(over="ignore"):
        pool = np.concatenate([EDGE_VALUES, [1e30, -1e30, 1e5, 1e-4, -3e-5, 7.0]]).astype(dtype)
    x = np.where(rng.random(1000) < 0.5, rng.choice(pool, 1000), _data(1000, dtype, scale=2.0))
    check_opencl(op, [x.astype(dtype)])
