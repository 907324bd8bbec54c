"""Gemm and MatMul on OpenCL against the C kernels."""

import numpy as np
import pytest

from opencl_check import check_opencl

RNG = np.random.default_rng(7)


def normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def operands(m, k, n, trans_a=0, trans_b=0, dtype=np.float32):
    return normal(*((k, m) if trans_a else (m, k)), dtype=dtype), normal(*((n, k) if trans_b else (k, n)), dtype=dtype)


def check_constant_b(op_type, inputs, attrs=None):
    """As check_opencl, with input 1 an initializer (weights, which the recorder may repack)."""
    check_opencl(op_type, inputs, attrs, constants=(1,))


# -- Gemm --------------------------------------------------------------------------------------------
SHAPES = [(1, 1, 1), (1, 300, 13), (13, 127, 300), (127, 13, 1), (300, 127, 13), (13, 1, 127), (16, 300, 127),
          (2, 13, 300)]  # (M, K, N)


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_gemm_transposes(m, k, n, trans_a, trans_b):
    a, b = operands(m, k, n, trans_a, trans_b)
    check_opencl("Gemm", [a, b, normal(n)], {"transA": trans_a, "transB": trans_b, "alpha": 0.75, "beta": -1.5})


@pytest.mark.parametrize("c_shape", ["N", "1N", "M1", "MN", "scalar", "none"])
@pytest.mark.parametrize("m,k,n", [(1, 127, 13), (13, 300, 127), (127, 13, 300)])
def test_gemm_c_broadcast(m, k, n, c_shape):
    a, b = operands(m, k, n)
    shape = {"N": (n,), "1N": (1, n), "M1": (m, 1), "MN": (m, n), "scalar": (), "none": None}[c_shape]
    inputs = [a, b] + ([normal(*shape)] if shape is not None else [])
    check_opencl("Gemm", inputs, {"alpha": 2.0, "beta": 0.5})


def test_gemm_default_attributes():
    a, b = operands(13, 127, 300)
    check_opencl("Gemm", [a, b, normal(300)])


def test_gemm_opset6_broadcast():
    a, b = operands(13, 127, 30)
    check_opencl("Gemm", [a, b, normal(30)], {"broadcast": 1, "transB": 0}, opset=6)


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("m,k,n", [(1, 127, 13), (13, 300, 127), (127, 13, 300), (4, 300, 1)])
def test_gemm_float16(m, k, n, trans_b):
    a, b = operands(m, k, n, 0, trans_b, dtype=np.float16)
    check_opencl("Gemm", [a, b, normal(m, 1, dtype=np.float16)], {"transB": trans_b, "alpha": 0.5})


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("m,k,n", [(1, 300, 127), (4, 300, 127), (16, 127, 300), (13, 13, 1), (100, 127, 13)])
def test_gemm_constant_weights(m, k, n, trans_b):
    a, b = operands(m, k, n, 0, trans_b)
    check_constant_b("Gemm", [a, b, normal(n)], {"transB": trans_b, "beta": 0.5})
    a, b = operands(m, k, n, 0, trans_b, dtype=np.float16)
    check_constant_b("Gemm", [a, b, normal(n, dtype=np.float16)], {"transB": trans_b})


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("m,n", [(1, 3), (1, 40), (3, 20)])
def test_gemm_split_k(m, n, trans_b):
    """Few columns and a long K: the gemv kernels split K and a second kernel adds the parts."""
    a, b = operands(m, 5000, n, 0, trans_b)
    check_opencl("Gemm", [a, b, normal(m, n)], {"transB": trans_b, "alpha": 0.5, "beta": 2.0}, rtol=1e-4, atol=3e-4)


def test_gemm_nan_propagates():
    a, b = operands(13, 127, 30)
    a[3, 5] = np.nan
    b[7, 11] = np.inf
    check_opencl("Gemm", [a, b, normal(30)])


def test_gemm_empty():
    check_opencl("Gemm", [normal(3, 0), normal(0, 4), normal(4)], {"beta": 2.0})  # K = 0: beta * C
    check_opencl("Gemm", [normal(0, 5), normal(5, 4), normal(4)])
    check_opencl("Gemm", [normal(3, 5), normal(5, 0)])


# -- MatMul ------------------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((7,), (7,)), ((7,), (7, 4)), ((5, 7), (7,)), ((1,), (1, 1)), ((300,), (300, 127)), ((127, 300), (300,)),
    ((2, 3, 5, 7), (7, 4)), ((1, 3, 5, 7), (2, 1, 7, 4)), ((7,), (2, 7, 4)), ((2, 5, 7), (7,)),
    ((3, 13, 127), (3, 127, 30)), ((2, 1, 1, 300), (2, 300, 13)), ((4, 70, 100), (100, 90)),
    ((2, 70, 13), (3, 1, 13, 90)), ((13, 127), (127, 300)), ((1, 300), (300, 13)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=[f"{a}x{b}" for a, b in MATMUL_SHAPES])
def test_matmul(sa, sb, dtype):
    check_opencl("MatMul", [normal(*sa, dtype=dtype), normal(*sb, dtype=dtype)])


@pytest.mark.parametrize("sa,sb", [((1, 300), (300, 127)), ((2, 7, 300), (300, 127)), ((13, 300), (300, 1))])
def test_matmul_constant_weights(sa, sb):
    check_constant_b("MatMul", [normal(*sa), normal(*sb)])


def test_matmul_empty():
    check_opencl("MatMul", [normal(2, 0), normal(0, 3)])  # K = 0: zeros
    check_opencl("MatMul", [normal(2, 3, 0), normal(0, 5)])
    check_opencl("MatMul", [normal(0, 4, 5), normal(5, 3)])
    check_opencl("MatMul", [normal(4, 5), normal(5, 0)])
