"""And/Or/Xor/Not, BitwiseAnd/Or/Xor/Not and BitShift (logical.c) against
onnx.reference: broadcasting, sizes, every integer type, shift edge cases, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _bools(shape):
    return rng.integers(0, 2, shape).astype(np.bool_)


def _ints(shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("shapes", [((4,), (4,)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3, 2)), ((), ()),
                                    ((0, 3), (3,)), ((13, 127), (13, 1))])
def test_logical_broadcast(op, shapes):
    check_node(op, [_bools(shapes[0]), _bools(shapes[1])])


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logical_sizes_and_opset1(op):
    for n in EDGE_SIZES:
        check_node(op, [_bools(n), _bools(n)])
    a, b = _bools((2, 3, 4)), _bools((3,))
    got = run_mlrt(make_model(op, [a, b], {"broadcast": 1, "axis": 1}, opset=1), [a, b])[0]
    np.testing.assert_array_equal(got, check_node(op, [a, b.reshape(3, 1)], opset=7)[0])


def test_not():
    for n in EDGE_SIZES:
        check_node("Not", [_bools(n)])
    check_node("Not", [np.array(True)])
    check_node("Not", [np.zeros((0, 2), np.bool_)])
    check_node("Not", [_bools((3, 4, 5))])


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_binary(op, dtype):
    check_node(op, [_ints((5, 6), dtype), _ints((6,), dtype)])
    check_node(op, [_ints((), dtype), _ints((13,), dtype)])


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_not(dtype):
    check_node("BitwiseNot", [_ints((3, 7), dtype)])
    check_node("BitwiseNot", [_ints((), dtype)])
    check_node("BitwiseNot", [np.zeros((0,), dtype)])


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", INTS)
def test_bitshift(direction, dtype):
    bits = np.iinfo(dtype).bits
    x = _ints((4, bits + 2), dtype)
    shift = np.arange(bits + 2).astype(dtype)          # includes shifts >= the bit width
    check_node("BitShift", [x, shift], {"direction": direction})
    check_node("BitShift", [x, np.array(3, dtype)], {"direction": direction})


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_bitshift_signed_edges(dtype):
    x = np.array([-8, -1, 5, np.iinfo(dtype).min, np.iinfo(dtype).max], dtype)
    for shift in (np.array([1, 1, -1, 1, 1], dtype), np.array([100 % 128] * 5, dtype)):
        for direction in ("LEFT", "RIGHT"):
            check_node("BitShift", [x, shift], {"direction": direction})


def test_bitshift_bad_direction():
    x = np.ones(3, np.uint8)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("BitShift", [x, x], {"direction": "UP"}), [x, x])


def test_bad_input():
    f = np.ones(3, np.float32)
    with pytest.raises(mlrt.MlrtError):   # And on floats
        run_mlrt(make_model("And", [f, f]), [f, f])
    with pytest.raises(mlrt.MlrtError):   # BitwiseAnd on floats
        run_mlrt(make_model("BitwiseAnd", [f, f]), [f, f])
    with pytest.raises(mlrt.MlrtError):   # Not on floats
        run_mlrt(make_model("Not", [f]), [f])
    a, b = _bools((2, 3)), _bools((2,))
    with pytest.raises(mlrt.MlrtError):   # shapes that do not broadcast
        run_mlrt(make_model("Or", [a, b]), [a, b])
