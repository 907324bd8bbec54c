"""MatMul against onnx.reference: numpy.matmul shapes (1-D operands, batch
broadcasting both ways, shared B folded into one product), sizes that split across
threads, float64 and integer types, empty tensors, edge values, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)

SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 3)),
          ((2, 1, 3, 4), (5, 4, 2)), ((7, 1, 5, 4), (4,)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)),
          ((2, 3, 4), (2, 4, 5)), ((3, 0, 4), (4, 2)), ((3, 4), (4, 0)), ((3, 0), (0, 5)), ((0, 3, 4), (4, 2)),
          ((1, 1), (1, 1)), ((2, 2, 2, 1, 3), (3, 1))]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_matmul_shapes(sa, sb, dtype):
    if np.dtype(dtype).kind == "f":
        a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    else:
        a, b = rng.integers(-9, 9, sa).astype(dtype), rng.integers(-9, 9, sb).astype(dtype)
    check_node("MatMul", [a, b])


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_matmul_unsigned(dtype):
    check_node("MatMul", [rng.integers(0, 9, (2, 3, 4)).astype(dtype), rng.integers(0, 9, (4, 5)).astype(dtype)])


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_matmul_sizes(n):
    check_node("MatMul", [rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, 3)).astype(np.float32)],
               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("sa,sb", [((256, 512), (512, 300)), ((16, 64, 64), (16, 64, 64)), ((64, 8, 33), (33, 100)),
                                   ((3, 200, 128), (128,)), ((1, 2048), (2048, 1000)), ((40, 1, 16), (40, 16, 9))])
def test_matmul_large(sa, sb):
    check_node("MatMul", [rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)],
               rtol=1e-4, atol=1e-4)


def test_matmul_edge_values():
    a = np.resize(EDGE_VALUES, (13, 1)).astype(np.float32)
    check_node("MatMul", [a, np.array([[1.0, -1.0, 0.0]], np.float32)])


@pytest.mark.parametrize("sa,sb", [((3, 4), (5, 6)), ((), (3,)), ((2, 3, 4), (3, 4, 5)), ((4,), (5,))])
def test_matmul_bad_input(sa, sb):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("MatMul", [a, b]), [a, b])


def test_matmul_mixed_types():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 2), np.float64)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("MatMul", [a, b]), [a, b])
