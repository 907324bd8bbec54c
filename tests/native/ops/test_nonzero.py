"""The data-dependent-shape ops run on the host for now — NonZero, Unique, Compress —
against onnx.reference; and their folding when the input is constant."""

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
import mlrt.lowlevel as ml
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


# -- NonZero -----------------------------------------------------------------------------
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_nonzero_sizes(n):
    x = rng.integers(0, 3, (n,)).astype(np.float32)
    check_node("NonZero", [x])


@pytest.mark.parametrize("shape", [(0,), (2, 0, 3), (3, 4), (2, 3, 4), (1, 1, 1, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.bool_])
def test_nonzero_shapes_dtypes(shape, dtype):
    x = rng.integers(-1, 2, shape).astype(dtype)
    check_node("NonZero", [x])


def test_nonzero_edge_values():
    check_node("NonZero", [EDGE_VALUES])  # -0.0 is zero; NaN and denormals are not


@pytest.mark.parametrize("value", [0.0, 2.5])
def test_nonzero_scalar(value):
    check_node("NonZero", [np.array(value, np.float32)])


@pytest.mark.parametrize("opset", [9, 13])
def test_nonzero_opsets(opset):
    check_node("NonZero", [np.array([[0, 1], [1, 1]], np.int64)], opset=opset)


def test_nonzero_strings():
    x = np.array(["", "a", "", "bc"], dtype=object)
    got = run_mlrt(make_model("NonZero", [x]), [x])[0]
    np.testing.assert_array_equal(got, [[1, 3]])


# -- Unique ------------------------------------------------------------------------------
@pytest.mark.parametrize("sorted_", [0, 1])
@pytest.mark.parametrize("x", [np.array([2, 1, 1, 3, 4, 3], np.float32), np.array([5], np.int64),
                               np.array([], np.float32), rng.integers(0, 5, (13, 4)).astype(np.int32),
                               rng.integers(0, 50, (127,)).astype(np.int64), np.array([[True, False], [True, True]]),
                               np.array([np.nan, 1.0, np.inf, -np.inf, 1.0, -0.0, 0.0], np.float64)])
def test_unique_flat(x, sorted_):
    if sorted_ or x.ndim == 1:
        check_node("Unique", [x], {"sorted": sorted_}, n_outputs=4, opset=11)
        return
    # onnx.reference cannot do unsorted Unique of a rank>1 input without an axis; with no
    # axis the input is flattened, so the flat input's reference result must match
    expected = check_node("Unique", [x.reshape(-1)], {"sorted": 0}, n_outputs=4, opset=11)
    got = run_mlrt(make_model("Unique", [x], {"sorted": 0}, n_outputs=4, opset=11), [x])
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("axis", [0, 1, -1, 2, -3])
def test_unique_axis_sorted(axis):
    x = rng.integers(0, 2, (4, 3, 2)).astype(np.float32)
    x = np.concatenate([x, x], axis=axis % 3)  # repeats along the axis for sure
    check_node("Unique", [x], {"axis": axis, "sorted": 1}, n_outputs=4, opset=11)


def test_unique_axis0_unsorted():
    x = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [0, 1, 2], [2, 3, 4]], np.float32)
    check_node("Unique", [x], {"axis": 0, "sorted": 0}, n_outputs=4, opset=11)


@pytest.mark.parametrize("axis", [1, -1])
def test_unique_axis_unsorted_first_occurrence(axis):
    # onnx.reference takes the unsorted slices along axis 0 whatever the axis; checked by hand
    x = np.array([[3, 1, 3, 2, 1], [0, 5, 0, 6, 5]], np.int64)
    y, first, inverse, counts = run_mlrt(make_model("Unique", [x], {"axis": axis, "sorted": 0}, n_outputs=4,
                                                    opset=11), [x])
    np.testing.assert_array_equal(y, [[3, 1, 2], [0, 5, 6]])
    np.testing.assert_array_equal(first, [0, 1, 3])
    np.testing.assert_array_equal(inverse, [0, 1, 0, 2, 1])
    np.testing.assert_array_equal(counts, [2, 2, 1])
    np.testing.assert_array_equal(np.take(y, inverse, axis=1), x)


def test_unique_one_output():
    x = np.array([3, 3, 1], np.int32)
    check_node("Unique", [x], {}, n_outputs=1, opset=11)


@pytest.mark.parametrize("axis", [None, 0])
def test_unique_strings(axis):
    x = np.array([["b", "a"], ["b", "a"], ["a", "c"]], dtype=object)
    attrs = {"axis": axis} if axis is not None else {}
    y, first, inverse, counts = run_mlrt(make_model("Unique", [x], attrs, n_outputs=4, opset=11), [x])
    if axis is None:
        assert list(y) == ["a", "b", "c"] and list(counts) == [3, 2, 1]
        np.testing.assert_array_equal(y[inverse], x.reshape(-1))
    else:
        np.testing.assert_array_equal(y, np.array([["a", "c"], ["b", "a"]], dtype=object))
        assert list(first) == [2, 0] and list(inverse) == [1, 1, 0] and list(counts) == [1, 2]


def test_unique_bad_axis():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(mlrt.MlrtError, match="axis"):
        run_mlrt(make_model("Unique", [x], {"axis": 2}, n_outputs=4, opset=11), [x])


# -- Compress ----------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
@pytest.mark.parametrize("n", [1, 2, 13, 127])
def test_compress(axis, n):
    x = rng.standard_normal((n, 3)).astype(np.float32)
    length = x.size if axis is None else x.shape[axis]
    cond = rng.integers(0, 2, (length,)).astype(np.bool_)
    attrs = {"axis": axis} if axis is not None else {}
    check_node("Compress", [x, cond], attrs, opset=11)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint8, np.bool_, np.int8])
def test_compress_dtypes(dtype):
    x = rng.integers(0, 4, (3, 4)).astype(dtype)
    check_node("Compress", [x, np.array([True, False, True])], {"axis": 0}, opset=9)


def test_compress_short_condition():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    check_node("Compress", [x, np.array([False, True])], {"axis": 1}, opset=11)
    check_node("Compress", [x, np.array([True, False, True, True, False])], {}, opset=11)


def test_compress_all_false_and_empty():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_node("Compress", [x, np.zeros(3, np.bool_)], {"axis": 1}, opset=11)
    check_node("Compress", [np.zeros((0, 3), np.float32), np.zeros(0, np.bool_)], {"axis": 0}, opset=11)


def test_compress_long_condition_extra_entries_ignored():
    x = np.arange(3, dtype=np.float32)
    got = run_mlrt(make_model("Compress", [x, np.array([True, False, True, True])], {"axis": 0}, opset=11),
                   [x, np.array([True, False, True, True])])[0]
    np.testing.assert_array_equal(got, [0.0, 2.0])


def test_compress_strings():
    x = np.array(["a", "b", "c"], dtype=object)
    got = run_mlrt(make_model("Compress", [x, np.array([True, False, True])], {"axis": 0}, opset=11),
                   [x, np.array([True, False, True])])[0]
    assert got.dtype == object and list(got) == ["a", "c"]


@pytest.mark.parametrize("cond", [np.array([[True, False]]), np.array([1, 0], np.int64)])
def test_compress_bad_condition(cond):
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(mlrt.MlrtError, match="condition"):
        run_mlrt(make_model("Compress", [x, cond], {"axis": 0}, opset=11), [x, cond])


# -- constant inputs fold away -----------------------------------------------------------
def test_constant_nonzero_is_folded():
    k = np.array([[0, 3], [4, 0]], np.float32)
    nodes = [helper.make_node("NonZero", ["k"], ["idx"]), helper.make_node("Add", ["idx", "b"], ["y"])]
    g = helper.make_graph(nodes, "fold", [helper.make_tensor_value_info("b", 7, [2, 2])],
                          [helper.make_empty_tensor_value_info("y")], initializer=[numpy_helper.from_array(k, "k")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    sess = ml.InferenceSession(m.SerializeToString())
    assert [op for _, op, _ in sess.get_node_assignment()] == ["Add"]
    b = np.ones((2, 2), np.int64)
    np.testing.assert_array_equal(sess.run(None, {"b": b})[0], np.array([[0, 1], [1, 0]]) + 1)
