"""MatMul against onnx.reference: numpy.matmul shapes (1-D operands, batch
broadcasting both ways, shared B folded into one product), sizes that split across
threads, float64 and integer types, empty tensors, edge values, bad input, a constant
wide B packed once."""

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


@pytest.mark.parametrize("sa", [(5, 70), (2, 3, 70), (1, 70), (70,), (2, 1, 70)])
def test_matmul_constant_wide_b(sa):
    """A constant float32 B of WIDE_B columns or more: products of several rows read it
    packed in the GEMM's strips (made once per node), one row reads it in place."""
    from onnx import TensorProto, helper, numpy_helper
    from mlrt.native.ops.matmul import WIDE_B
    from oracle import assert_same, run_reference
    r = np.random.default_rng(5)
    a = r.standard_normal(sa).astype(np.float32)
    b = r.standard_normal((70, WIDE_B + 13)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "g",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    expected = run_reference(model, [a])[0]
    for threads in (1, 2):
        assert_same(run_mlrt(model, [a], intra_op_num_threads=threads)[0], expected, 1e-4, 1e-4,
                    where=f"MatMul, constant wide B, {threads} thread(s)")


def test_matmul_packed_b_of_the_wrong_size_is_refused():
    from onnx import TensorProto, helper, numpy_helper
    from mlrt.native.ops import matmul as matmul_op
    if matmul_op.packed_strips(np.ones((4, 3), np.float32), False) is None:
        pytest.skip("this CPU has no float32 micro-kernels: MatMul reads B in place")
    real = matmul_op.packed_strips
    try:
        matmul_op.packed_strips = lambda b, trans_b: real(b, trans_b)[:-1]
        graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "g",
                                  [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3, 4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(np.ones((4, matmul_op.WIDE_B), np.float32), "b")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        with pytest.raises(mlrt.MlrtError, match="packed B"):
            run_mlrt(model, [np.ones((3, 4), np.float32)])
    finally:
        matmul_op.packed_strips = real


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("rows", [128, 17])
def test_matmul_heads_over_threads(threads, rows):
    # attention's batched products (4 heads of rows x 64 by 64 x 128): whole heads per thread
    # where they fall on the threads evenly, else each product over the threads in row blocks
    # of even size; the same values (every element's sum in one order) whichever way
    import mlrt.lowlevel as ml
    a = rng.standard_normal((1, 4, rows, 64)).astype(np.float32)
    b = rng.standard_normal((1, 4, 64, 128)).astype(np.float32)
    so = ml.SessionOptions()
    so.intra_op_num_threads = threads
    got = run_mlrt(make_model("MatMul", [a, b]), [a, b], sess_options=so)[0]
    one = ml.SessionOptions()
    one.intra_op_num_threads = 1
    np.testing.assert_array_equal(got, run_mlrt(make_model("MatMul", [a, b]), [a, b], sess_options=one)[0])
    np.testing.assert_allclose(got, np.matmul(a.astype(np.float64), b), rtol=1e-4, atol=1e-4)
