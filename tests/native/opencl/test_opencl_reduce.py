"""Reductions on OpenCL against the C kernels."""

import numpy as np
import pytest

import mlrt.native.opencl.reduce as reduce_mod
from opencl_check import check_opencl, opencl_device
from oracle import EDGE_VALUES

OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
       "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
FLOATS = [np.float32, np.float16]
AXES = [None, [0], [1], [2], [-1], [0, 2], [1, 2], [-3, -2], [0, 1, 2]]


def _data(op, shape, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if op == "ReduceLogSum":
        x = np.abs(x) + 0.1  # a positive sum
    elif op == "ReduceProd":
        x = 1 + x / 64  # a product that stays in range however long
    return x.astype(dtype)


def _attr_axes(op):
    """The last opset taking axes as an attribute."""
    return 12 if op == "ReduceSum" else 17


def _run(op, x, axes, keepdims=1, dtype=None, input_axes=False, noop=None, **kw):
    attrs = {"keepdims": keepdims}
    if input_axes:
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
        inputs = [x] if axes is None else [x, np.array(axes, np.int64)]
        return check_opencl(op, inputs, attrs, opset=18, **kw)
    if axes is not None:
        attrs["axes"] = axes
    return check_opencl(op, [x], attrs, opset=_attr_axes(op), **kw)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_axes(op, axes, keepdims, dtype):
    _run(op, _data(op, (2, 3, 4), dtype), axes, keepdims)


@pytest.mark.parametrize("op", OPS)
def test_axes_as_input(op):
    x = _data(op, (3, 4, 5), np.float32)
    _run(op, x, [0, -1], 1, input_axes=True)
    _run(op, x, [1], 0, input_axes=True)
    _run(op, x, None, 0, input_axes=True)  # no axes: all of them
    _run(op, x, [], 1, input_axes=True)  # empty axes: all of them ...
    _run(op, x, [], 1, input_axes=True, noop=1)  # ... unless noop_with_empty_axes (then y is f(x) elementwise)
    _run(op, x.astype(np.float16), [2], 0, input_axes=True)


@pytest.fixture(params=[None, True], ids=["device-choice", "groups"])
def groups(request, monkeypatch):
    """Also run the work-group kernels, which only GPUs choose by themselves."""
    monkeypatch.setattr(reduce_mod, "GROUPS", request.param)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape, axes", [
    ((1,), [0]), ((13,), [0]), ((127,), [0]),  # a short line
    ((3, 5000), [1]), ((5000, 3), [0]),  # long lines, long columns (work-groups: one each)
    ((100000,), None), ((2, 40000), [-1]),  # (work-groups: chunks combined by a second kernel)
    ((400, 300), [0]), ((300, 7, 5), [1]),  # columns: VEC outputs a work-item, and the tails
    ((4, 600, 3), [0, 2]), ((6, 70, 50), [0, 2])], ids=str)  # two reduced dims apart
def test_sizes(op, shape, axes, dtype, groups):
    x = _data(op, shape, dtype, seed=len(shape))
    _run(op, x, axes, 0)


@pytest.mark.parametrize("op", OPS)
def test_edge_values(op, groups):
    x = np.tile(EDGE_VALUES, (13, 1))
    if "cl_khr_fp64" not in opencl_device().cl_device.extensions:
        x[np.abs(x) > 1e38] /= 1e8  # sums in float: a mean of values near FLT_MAX overflows on the way
    for k in range(13):
        x[k, k] = 1.0  # row k drops one edge value
    _run(op, x, [1], 1)  # rows with and without NaN, +-inf, denormals
    _run(op, x, [0], 1)
    long = np.ones((2, 20000), np.float32)
    long[0, 12345] = np.nan
    long[1, 777] = -np.inf
    _run(op, long, [1], 0)  # in the work-group path
    big = np.ones(200000, np.float32)
    big[150000] = np.inf
    _run(op, big, None, 0)  # in the chunked path


@pytest.mark.parametrize("op", OPS)
def test_empty(op):
    _run(op, np.zeros((2, 0, 3), np.float32), [1], 1)  # empty reduction: the identity, then the final step
    _run(op, np.zeros((2, 0, 3), np.float16), [1], 0)
    _run(op, np.zeros((0, 3), np.float32), [1], 1)  # no outputs
    _run(op, np.zeros((0, 3), np.float32), None, 0)


@pytest.mark.parametrize("op", OPS)
def test_rank0_and_singletons(op):
    _run(op, np.array(1.5, np.float32), None, 1)
    _run(op, _data(op, (1, 5, 1), np.float32), [0, 2], 0)
    _run(op, _data(op, (2, 1, 3), np.float16), [1], 1)
