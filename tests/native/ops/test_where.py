"""Where (where.c) against onnx.reference: three-way broadcasting, every element
size, edge sizes, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


@pytest.mark.parametrize("shapes", [((4,), (4,), (4,)), ((2, 3, 4), (4,), (3, 1)), ((2, 1, 4), (1, 3, 1), ()),
                                    ((), (2, 3), (3,)), ((), (), ()), ((0, 3), (3,), (1,)), ((13, 127), (13, 1), (127,)),
                                    ((3, 1, 1, 1, 2), (1, 4, 1, 2), (5, 1, 1, 1))])
def test_broadcast(shapes):
    c = rng.integers(0, 2, shapes[0]).astype(np.bool_)
    x = rng.standard_normal(shapes[1]).astype(np.float32)
    y = rng.standard_normal(shapes[2]).astype(np.float32)
    check_node("Where", [c, x, y])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64, np.float16, np.float32, np.float64])
def test_types(dtype):
    c = rng.integers(0, 2, (5, 6)).astype(np.bool_)
    x = rng.integers(0, 100, (5, 6)).astype(dtype)
    y = rng.integers(0, 100, (6,)).astype(dtype)
    check_node("Where", [c, x, y])


def test_sizes_and_values():
    for n in EDGE_SIZES:
        check_node("Where", [rng.integers(0, 2, n).astype(np.bool_), rng.standard_normal(n), np.float64(-1.0)])
    c = np.arange(len(EDGE_VALUES)) % 2 == 0
    check_node("Where", [c, EDGE_VALUES, EDGE_VALUES[::-1].copy()])


def test_old_opset():
    c = rng.integers(0, 2, (3, 4)).astype(np.bool_)
    check_node("Where", [c, np.ones((3, 4), np.float32), np.zeros((4,), np.float32)], opset=9)


def test_bad_input():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(mlrt.MlrtError):   # condition is not bool
        c = np.ones((2, 3), np.float32)
        run_mlrt(make_model("Where", [c, x, x]), [c, x, x])
    c = np.ones((2, 3), np.bool_)
    with pytest.raises(mlrt.MlrtError):   # x and y differ in type
        y = np.ones((2, 3), np.float64)
        run_mlrt(make_model("Where", [c, x, y]), [c, x, y])
    with pytest.raises(mlrt.MlrtError):   # shapes do not broadcast
        y = np.ones((4,), np.float32)
        run_mlrt(make_model("Where", [c, x, y]), [c, x, y])
