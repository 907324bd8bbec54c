"""Softmax, LogSoftmax, Hardmax against onnx.reference: axes, the 2-D coercion of
opsets < 13, edge sizes and values, float64, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, assert_same, check_node, make_model, run_mlrt, run_reference, tolerance

rng = np.random.default_rng(0)
OPS = ["Softmax", "LogSoftmax", "Hardmax"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_softmax_axes(op, axis):
    check_node(op, [rng.standard_normal((3, 4, 5)).astype(np.float32)], {"axis": axis})


@pytest.mark.parametrize("op", OPS)
def test_softmax_default_axis(op):
    check_node(op, [rng.standard_normal((3, 4, 5)).astype(np.float32)])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_softmax_sizes(op, n):
    x = (rng.standard_normal((3, n)) * 5).astype(np.float32)
    check_node(op, [x], {"axis": 1})                                    # rows
    check_node(op, [x], {"axis": 0})                                    # n lines at stride n
    check_node(op, [(rng.standard_normal((2, 3, n)) * 5).astype(np.float32)], {"axis": 1})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,axis", [((64, 1000), -1), ((4, 12, 64, 64), -1), ((2, 21, 40, 40), 1),
                                        ((3, 7, 600), 1), ((130, 9, 2), 0)])
def test_softmax_large(op, shape, axis):
    check_node(op, [(rng.standard_normal(shape) * 3).astype(np.float32)], {"axis": axis})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [1, 11])
@pytest.mark.parametrize("shape,axis", [((3, 4, 5), 1), ((3, 4, 5), 0), ((3, 4, 5), 2), ((3, 4, 5), -2),
                                        ((2, 3, 4, 5), None)])
def test_softmax_coerced_2d(op, opset, shape, axis):
    # before opset 13 the input is flattened to 2-D at axis; onnx.reference ignores that,
    # so the expectation is the opset-13 op on the flattened input
    x = rng.standard_normal(shape).astype(np.float32)
    attrs = {} if axis is None else {"axis": axis}
    a = (1 if axis is None else axis) % len(shape)
    x2 = x.reshape(int(np.prod(shape[:a])), -1)
    expected = run_reference(make_model(op, [x2], {"axis": 1}, opset=13), [x2])[0].reshape(shape)
    got = run_mlrt(make_model(op, [x], attrs, opset=opset), [x])[0]
    assert_same(got, expected, *tolerance(op, opset), where=op)


@pytest.mark.parametrize("op", OPS)
def test_softmax_float64(op):
    check_node(op, [rng.standard_normal((5, 33)).astype(np.float64)], {"axis": -1})
    check_node(op, [rng.standard_normal((5, 33, 4)).astype(np.float64)], {"axis": 1})


@pytest.mark.parametrize("op", ["Softmax", "Hardmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_edge_values(op, dtype):
    # rows: with NaN; with +inf; with -inf and huge values; denormals; a row of -inf
    x = np.stack([EDGE_VALUES, np.where(np.isnan(EDGE_VALUES), 1.0, EDGE_VALUES),
                  np.nan_to_num(EDGE_VALUES, nan=0.0, posinf=1.0), np.full(13, 1e-40),
                  np.full(13, -np.inf)]).astype(dtype)
    check_node(op, [x], {"axis": 1})
    check_node(op, [np.ascontiguousarray(x.T)], {"axis": 0})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_large_numbers(op):
    x = np.array([[0, 1, 2, 3], [10000, 10001, 10002, 10003], [-5e4, -5e4 + 1, -5e4 + 2, -5e4 + 3]], np.float32)
    check_node(op, [x], {"axis": 1})
    check_node(op, [np.ascontiguousarray(x.T)], {"axis": 0})


def test_logsoftmax_is_stable():
    # log(softmax) underflows to -inf in float32; x - max - log(sum) does not
    x = np.array([[0.0, -200.0, 10.0]], np.float32)
    got = run_mlrt(make_model("LogSoftmax", [x], {"axis": 1}), [x])[0]
    expected = (x - 10.0 - np.log1p(np.exp(-10.0) + np.exp(-210.0))).astype(np.float32)
    assert_same(got, expected, *tolerance("LogSoftmax", 13), where="LogSoftmax")


def test_hardmax_ties_pick_first():
    x = np.array([[1, 3, 3, 2], [5, 5, 5, 5], [-1, -1, -2, -1]], np.float32)
    check_node("Hardmax", [x], {"axis": 1})
    check_node("Hardmax", [np.ascontiguousarray(x.T)], {"axis": 0})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (2, 0, 4)])
def test_softmax_empty(op, shape):
    x = np.zeros(shape, np.float32)
    assert run_mlrt(make_model(op, [x], {"axis": -1}), [x])[0].shape == shape
    assert run_mlrt(make_model(op, [x], {"axis": 0}), [x])[0].shape == shape


@pytest.mark.parametrize("op", OPS)
def test_softmax_bad_input(op):
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.zeros((2, 3), np.float32)], {"axis": 2})
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.zeros((2, 3), np.float32)], {"axis": -3}, opset=11)


def test_softmax_kernel_checks_its_params():
    # the C kernel refuses extents that do not cover its tensors (never reads past them)
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    x = np.zeros((4, 5), np.float32)
    y = np.empty_like(x)
    ins, outs = ffi.new("mlrt_tensor[1]"), ffi.new("mlrt_tensor[1]")
    _lib.fill_tensor(ins[0], x.dtype, x.shape, None, _lib.array_pointer(x))
    _lib.fill_tensor(outs[0], y.dtype, y.shape, None, _lib.array_pointer(y))
    k = _lib.find_kernel("", "Softmax", 13, x.dtype)
    for params in ({"outer": 4, "n": 6, "inner": 1}, {"outer": -4, "n": -5, "inner": 1}):
        keep, p, size = _lib.pack_params("mlrt_softmax_params", params)
        assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 1, outs, 1, p, size) == 1
    keep, p, size = _lib.pack_params("mlrt_softmax_params", {"outer": 4, "n": 5, "inner": 1})
    assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 1, outs, 1, p, size - 8) == 1
    assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 1, outs, 1, p, size) == 0
