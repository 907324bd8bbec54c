"""Softmax and LogSoftmax on OpenCL against the C kernels: the 2-D coercion of opsets
< 13 and one axis from 13, short lines (a work-item each) and long ones (a work-group
each), float16, inf/NaN and large values."""

import numpy as np
import pytest

from opencl_check import check_opencl

rng = np.random.default_rng(0)
OPS = ["Softmax", "LogSoftmax"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [1, 13, 127, 256, 1000])
def test_rows(op, n, dtype):
    x = (rng.standard_normal((3, n)) * 4).astype(dtype)
    check_opencl(op, [x], {"axis": 1})
    check_opencl(op, [x], {"axis": 0})  # 3-element lines at stride n


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_axis_by_opset(op, opset, axis):
    """Before 13 the dims from axis on are one row; from 13 only the axis is."""
    check_opencl(op, [(rng.standard_normal((3, 5, 7)) * 3).astype(np.float32)], {"axis": axis}, opset=opset)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [9, 13])
def test_default_axis(op, opset):
    check_opencl(op, [rng.standard_normal((2, 4, 6)).astype(np.float32)], opset=opset)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,axis,opset", [((2, 300, 5), 1, 13), ((2, 3, 300), 1, 11), ((1, 1000), 1, 9),
                                              ((64, 1000), -1, 13), ((2, 4, 2000), -1, 13)])
def test_long_lines(op, shape, axis, opset):
    """Lines of 256 and more are reduced by a work-group, also at a stride (inner > 1)."""
    for dtype in (np.float32, np.float16):
        check_opencl(op, [(rng.standard_normal(shape) * 3).astype(dtype)], {"axis": axis}, opset=opset)


def _edge_rows(n: int) -> np.ndarray:
    rows = np.zeros((7, n), np.float32)
    rows[0, 1] = np.inf                       # +inf: the whole row is NaN
    rows[1, 2] = np.nan                       # NaN poisons the row
    rows[2, :] = -np.inf                      # all -inf: NaN (-inf - -inf)
    rows[3, 0] = -np.inf                      # one -inf: 0 / -inf, the rest finite
    rows[4, :2], rows[4, 2:] = 3e38, -3e38    # large values: no overflow after the max is taken
    rows[5, :] = 88.0 + np.arange(n) / n      # exp of the raw values would overflow
    rows[6, :] = 1e-40                        # denormals
    return rows


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [4, 300])
def test_edge_values(op, n):
    x = _edge_rows(n)
    check_opencl(op, [x], {"axis": 1})
    check_opencl(op, [np.ascontiguousarray(x.T)], {"axis": 0}, opset=13)  # the same lines at a stride


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # (LogSoftmax below -65504 is -inf)
@pytest.mark.parametrize("op", OPS)
def test_float16_large_values(op):
    x = np.array([[60000, 60000, -60000, 0], [-65504, 65504, 1, 2]], np.float16)
    check_opencl(op, [x])


@pytest.mark.parametrize("op", OPS)
def test_empty(op):
    check_opencl(op, [np.zeros((0, 5), np.float32)])
    check_opencl(op, [np.zeros((3, 0), np.float32)], opset=13)
