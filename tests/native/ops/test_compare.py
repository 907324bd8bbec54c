"""Equal/Less/Greater/LessOrEqual/GreaterOrEqual (compare.c) against onnx.reference:
broadcasting, every type, NaN/inf/-0, edge sizes, opset-1 axis broadcasting, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)
OPS = ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]


@pytest.mark.parametrize("op", OPS)
def test_edge_values(op):
    a = np.repeat(EDGE_VALUES, len(EDGE_VALUES))
    b = np.tile(EDGE_VALUES, len(EDGE_VALUES))
    got = check_node(op, [a, b])[0]
    assert got.dtype == np.bool_
    check_node(op, [a.astype(np.float64), b.astype(np.float64)])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shapes", [((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (5, 1, 1)), ((), (3, 2)), ((), ()),
                                    ((0, 3), (3,)), ((13, 127), (13, 1)), ((4, 1, 3, 1, 2), (5, 1, 1, 2))])
def test_broadcast(op, shapes):
    a = rng.integers(-3, 3, shapes[0]).astype(np.float32)
    b = rng.integers(-3, 3, shapes[1]).astype(np.float32)
    check_node(op, [a, b])


@pytest.mark.parametrize("op", OPS)
def test_sizes(op):
    for n in EDGE_SIZES:
        check_node(op, [rng.integers(0, 4, n).astype(np.int32), rng.integers(0, 4, n).astype(np.int32)])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   np.float16])
def test_types(op, dtype):
    lo = 0 if np.dtype(dtype).kind == "u" else -4
    a = rng.integers(lo, 4, (6, 7)).astype(dtype)
    b = rng.integers(lo, 4, (7,)).astype(dtype)
    check_node(op, [a, b])


def test_integer_extremes():
    info = np.iinfo(np.int64)
    a = np.array([info.min, info.max, info.max, 0], np.int64)
    b = np.array([info.max, info.max, info.max - 1, -1], np.int64)
    for op in OPS:
        check_node(op, [a, b])
        check_node(op, [a.view(np.uint64), b.view(np.uint64)])


def test_equal_bool():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    check_node("Equal", [a, b])
    check_node("Equal", [a.reshape(4, 1), b])


def test_float16_signed_zero_and_nan():
    a = np.array([0.0, -0.0, np.nan, np.inf, 65504, 1e-7], np.float16)
    b = np.array([-0.0, 0.0, np.nan, np.inf, np.inf, 0], np.float16)
    for op in OPS:
        check_node(op, [a, b])


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater"])
def test_opset1_axis_broadcast(op):
    # before opset 7, broadcast=1 with axis=1 lines B (3,) up with A's dim 1
    a = rng.integers(0, 3, (2, 3, 4)).astype(np.float32)
    b = rng.integers(0, 3, (3,)).astype(np.float32)
    got = run_mlrt(make_model(op, [a, b], {"broadcast": 1, "axis": 1}, opset=1), [a, b])[0]
    expected = check_node(op, [a, b.reshape(3, 1)], opset=7)[0]
    np.testing.assert_array_equal(got, expected)
    # without axis it is numpy's suffix rule
    c = rng.integers(0, 3, (4,)).astype(np.float32)
    got = run_mlrt(make_model(op, [a, c], {"broadcast": 1}, opset=1), [a, c])[0]
    np.testing.assert_array_equal(got, check_node(op, [a, c], opset=7)[0])


def test_opset1_axis_out_of_range():
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 4), np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Equal", [a, b], {"broadcast": 1, "axis": 1}, opset=1), [a, b])


def test_bad_input():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(mlrt.MlrtError):  # shapes that do not broadcast
        b = np.ones((4,), np.float32)
        run_mlrt(make_model("Less", [a, b]), [a, b])
    with pytest.raises(mlrt.MlrtError):  # mixed types
        b = np.ones((3,), np.float64)
        run_mlrt(make_model("Equal", [a, b]), [a, b])
