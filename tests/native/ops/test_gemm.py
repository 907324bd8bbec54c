"""Gemm against onnx.reference: transA / transB, alpha / beta, every C broadcast,
no C (opset 11+), the opset < 7 `broadcast` attribute, sizes that split across
threads, float64 and integer types, edge values, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, assert_same, check_node, make_model, run_mlrt, run_reference

rng = np.random.default_rng(0)


def mats(m, n, k, ta=0, tb=0, dtype=np.float32):
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    return a, b


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("c_shape", [None, (), (1,), (5,), (3, 1), (1, 5), (3, 5)])
def test_gemm_attributes(ta, tb, c_shape):
    a, b = mats(3, 5, 4, ta, tb)
    inputs = [a, b] + ([rng.standard_normal(c_shape).astype(np.float32)] if c_shape is not None else [])
    check_node("Gemm", inputs, {"transA": ta, "transB": tb, "alpha": 0.5, "beta": -2.0})


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_gemm_sizes(n):
    a, b = mats(n, 7, n)
    check_node("Gemm", [a, b, rng.standard_normal(7).astype(np.float32)])
    a, b = mats(2, n, 3, tb=1)
    check_node("Gemm", [a, b], {"transB": 1})


@pytest.mark.parametrize("m,n,k,ta,tb", [(1, 4096, 2048, 0, 1), (256, 300, 129, 1, 0), (300, 64, 200, 1, 1),
                                         (1000, 3, 37, 0, 0)])
def test_gemm_large(m, n, k, ta, tb):
    a, b = mats(m, n, k, ta, tb)
    check_node("Gemm", [a, b, rng.standard_normal(n).astype(np.float32)], {"transA": ta, "transB": tb},
               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint32, np.uint64])
def test_gemm_types(dtype):
    if np.dtype(dtype).kind == "f":
        a, b = mats(6, 5, 7, dtype=dtype)
        c = rng.standard_normal((6, 1)).astype(dtype)
    else:
        a, b = rng.integers(0, 9, (6, 7)).astype(dtype), rng.integers(0, 9, (7, 5)).astype(dtype)
        c = rng.integers(0, 9, (6, 1)).astype(dtype)
    check_node("Gemm", [a, b, c])
    check_node("Gemm", [a.T.copy(), b, c], {"transA": 1, "alpha": 2.0, "beta": 3.0})


def test_gemm_empty():
    a, b = mats(0, 5, 4)
    check_node("Gemm", [a, b, np.ones(5, np.float32)])
    a, b = mats(3, 5, 0)  # K = 0: Y = beta * C
    check_node("Gemm", [a, b, rng.standard_normal((3, 5)).astype(np.float32)], {"beta": 2.0})


def test_gemm_edge_values():
    a = np.resize(EDGE_VALUES, (13, 1)).astype(np.float32)
    b = np.array([[1.0, -1.0, 0.5]], np.float32)
    check_node("Gemm", [a, b, np.zeros(3, np.float32)])


@pytest.mark.parametrize("opset", [1, 6])
def test_gemm_legacy_broadcast(opset):
    # onnx.reference has no Gemm-1: opset 1 is checked against its opset-6 result
    a, b = mats(3, 4, 5)
    for c, bc in ((rng.standard_normal((3, 4)).astype(np.float32), 0), (rng.standard_normal(4).astype(np.float32), 1)):
        attrs = {"broadcast": bc, "alpha": 2.0}
        got = run_mlrt(make_model("Gemm", [a, b, c], attrs, opset=opset), [a, b, c])[0]
        expected = run_reference(make_model("Gemm", [a, b, c], attrs, opset=6), [a, b, c])[0]
        assert_same(got, expected, 1e-5, 1e-5, where="Gemm")
    c = np.ones(4, np.float32)
    with pytest.raises(mlrt.MlrtError):  # without broadcast=1, C must be (M, N)
        run_mlrt(make_model("Gemm", [a, b, c], {"broadcast": 0}, opset=opset), [a, b, c])


def test_gemm_opset7_broadcasts():
    a, b = mats(3, 4, 5)
    check_node("Gemm", [a, b, np.float32(1.5) * np.ones((1, 4), np.float32)], opset=7)


@pytest.mark.parametrize("shapes", [((3, 4), (5, 6), None), ((3, 4), (4, 5), (2, 5)), ((3, 4), (4, 5), (3, 5, 1)),
                                    ((3, 4, 1), (4, 5), None), ((3,), (3, 5), None)])
def test_gemm_bad_input(shapes):
    inputs = [np.ones(s, np.float32) for s in shapes if s is not None]
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Gemm", inputs), inputs)


def test_gemm_mixed_types():
    inputs = [np.ones((2, 3), np.float32), np.ones((3, 2), np.float64)]
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Gemm", inputs), inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
@pytest.mark.parametrize("c_shape", [None, "one row", "rows"])
@pytest.mark.parametrize("rows,n", [(1, 37), (5, 37), (13, 131), (2, 1), (3, 2048 + 5)])
def test_gemm_constant_b(dtype, ta, tb, c_shape, rows, n):
    """B an initializer: for several rows the plan makes B over once, read in place of B
    (float32 under transB or 2048 columns wide: packed in the micro-kernels' strips, N
    past a strip's width and not a multiple of it; float64 under transB: B^T, a
    classifier head as exporters write it); one row reads B itself."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    a = rng.standard_normal((70, rows) if ta else (rows, 70)).astype(dtype)
    b = rng.standard_normal((n, 70) if tb else (70, n)).astype(dtype)
    c_shape = {"rows": (rows, n), "one row": (1, n), None: None}[c_shape]
    c = rng.standard_normal(c_shape).astype(dtype) if c_shape else None
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    inits = [numpy_helper.from_array(b, "b")] + ([numpy_helper.from_array(c, "c")] if c is not None else [])
    node = helper.make_node("Gemm", ["a", "b"] + (["c"] if c is not None else []), ["y"], transA=ta, transB=tb,
                            alpha=0.5, beta=2.0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", elem, a.shape)],
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    expected = run_reference(model, [a])[0]
    for threads in (1, 2):
        got = run_mlrt(model, [a], intra_op_num_threads=threads)[0]
        assert_same(got, expected, 1e-5, 1e-5, where=f"Gemm, constant B, {threads} thread(s)")


def test_gemm_pack_b_sizes_and_layout():
    """mlrt_gemm_pack_b: strips of the micro-kernels' width, K rows each, zero past N;
    transB packs the same strips from B^T's layout."""
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    size = ffi.new("int64_t *")
    assert lib.mlrt_gemm_pack_b(0, 3, 5, ffi.NULL, 0, size, ffi.NULL) == 0
    if size[0] == 0:
        pytest.skip("this CPU has no float32 micro-kernels: Gemm reads B in place")
    width = size[0] // 3
    assert size[0] == 3 * width and width >= 5
    b = rng.standard_normal((3, width + 2)).astype(np.float32)
    for trans, src in ((0, b), (1, np.ascontiguousarray(b.T))):
        assert lib.mlrt_gemm_pack_b(trans, 3, width + 2, ffi.NULL, 0, size, ffi.NULL) == 0
        packed = np.full(size[0], np.nan, np.float32)
        assert packed.size == 2 * 3 * width
        assert lib.mlrt_gemm_pack_b(trans, 3, width + 2, ffi.cast("float *", src.ctypes.data), packed.size - 1,
                                    size, ffi.cast("float *", packed.ctypes.data)) != 0  # too little room
        assert lib.mlrt_gemm_pack_b(trans, 3, width + 2, ffi.cast("float *", src.ctypes.data), packed.size, size,
                                    ffi.cast("float *", packed.ctypes.data)) == 0
        strips = packed.reshape(2, 3, width)
        np.testing.assert_array_equal(strips[0], b[:, :width])
        np.testing.assert_array_equal(strips[1, :, :2], b[:, width:])
        np.testing.assert_array_equal(strips[1, :, 2:], 0)
    assert lib.mlrt_gemm_pack_b(0, -1, 5, ffi.NULL, 0, size, ffi.NULL) != 0


def test_gemm_packed_b_of_the_wrong_size_is_refused():
    """The kernel checks the packed B it is handed against B's sizes: an error, not a read
    past its end."""
    from mlrt.native.ops import gemm as gemm_op
    if gemm_op.packed_strips(np.ones((4, 3), np.float32), False) is None:
        pytest.skip("this CPU has no float32 micro-kernels: Gemm reads B in place")
    real = gemm_op.packed_strips
    try:
        gemm_op.packed_strips = lambda b, trans_b: real(b, trans_b)[:-1]
        from onnx import TensorProto, helper, numpy_helper
        graph = helper.make_graph([helper.make_node("Gemm", ["a", "b"], ["y"], transB=1)], "g",
                                  [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3, 4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(np.ones((3, 4), np.float32), "b")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        with pytest.raises(mlrt.MlrtError, match="packed B"):
            run_mlrt(model, [np.ones((3, 4), np.float32)])
    finally:
        gemm_op.packed_strips = real
