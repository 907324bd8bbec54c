"""Activations on OpenCL against the C kernels."""

import numpy as np
import pytest

from opencl_check import check_opencl
from oracle import EDGE_VALUES


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh"])
@pytest.mark.parametrize("n", [1, 13, 127, 1000])
def test_unary(op, n, dtype):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype) * 3
    check_opencl(op, [x])


def test_relu_edge_values():
    check_opencl("Relu", [EDGE_VALUES])


def test_leaky_relu_alpha():
    x = np.linspace(-3, 3, 50, dtype=np.float32).reshape(5, 10)
    check_opencl("LeakyRelu", [x], {"alpha": 0.2})


def test_empty():
    check_opencl("Relu", [np.zeros((0, 3), np.float32)])
