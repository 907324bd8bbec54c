"""Reduce* and ArgMax/ArgMin against onnx.reference: axes as attribute and input,
keepdims, noop_with_empty_axes, empty sets, edge sizes and values, integer types."""

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)

REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
AXES_INPUT_SINCE = {"ReduceSum": 13}


def data(op, shape, dtype=np.float32):
    if op == "ReduceLogSum":
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    if op == "ReduceProd":
        return rng.uniform(0.8, 1.25, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def reduce(op, x, axes=None, keepdims=1, opset=18, atol=None, **attrs):
    """check_node for a Reduce*, passing axes the way `opset` wants them."""
    attrs = dict(attrs, keepdims=keepdims)
    if opset >= AXES_INPUT_SINCE.get(op, 18):
        inputs = [x] if axes is None else [x, np.array(axes, np.int64)]
    else:
        inputs = [x]
        if axes is not None:
            attrs["axes"] = list(axes)
    return check_node(op, inputs, attrs, opset=opset, atol=atol)


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("axes", [None, [0], [1], [-1], [0, 2], [1, 2], [0, 1, 2], [2, 0]])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_axes(op, axes, keepdims):
    reduce(op, data(op, (3, 4, 5)), axes, keepdims)


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("opset", [1, 11, 13])
def test_reduce_axes_attribute(op, opset):
    x = data(op, (2, 3, 4))
    reduce(op, x, [1], 1, opset)
    reduce(op, x, [-1, 0], 0, opset)
    reduce(op, x, None, 0, opset)


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_reduce_sizes(op, n):
    reduce(op, data(op, (n,)), None, 0)          # one contiguous line
    reduce(op, data(op, (n, 3)), [0], 1)         # columns
    reduce(op, data(op, (3, n, 2)), [0, 2], 0)   # strided lines


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("shape,axes", [((64, 300, 50), [1]), ((64, 300, 50), [0, 2]), ((3, 1000, 600), [2]),
                                        ((600, 2, 300), [0])])
def test_reduce_large(op, shape, axes):
    # long float32 sums in the reference drift by about sqrt(n) * eps (mlrt sums in double)
    reduce(op, data(op, shape), axes, 0, atol=1e-4)


@pytest.mark.parametrize("op", REDUCE)
def test_reduce_empty_set(op):
    x = np.zeros((2, 0, 3), np.float32)
    reduce(op, x, [1], 1)    # identities: 0, 1, -inf, +inf, NaN (mean)
    reduce(op, x, None, 0)
    reduce(op, x, [0], 1)    # nothing to compute: the output is empty too


@pytest.mark.parametrize("op", REDUCE)
def test_reduce_noop_with_empty_axes(op):
    x = data(op, (3, 4))
    reduce(op, x, [], 1, noop_with_empty_axes=1)  # each element "reduced" on its own
    reduce(op, x, None, 1, noop_with_empty_axes=1)
    reduce(op, x, [], 0)                          # empty axes without noop: all axes


@pytest.mark.parametrize("op", REDUCE)
def test_reduce_rank0(op):
    x = np.array(data(op, ()))
    if op == "ReduceLogSumExp":  # onnx.reference fails on a scalar; log(exp(x)) = x
        for keepdims in (0, 1):
            got = run_mlrt(make_model(op, [x], {"keepdims": keepdims}, opset=18), [x])[0]
            assert got.shape == () and np.isclose(got, x, rtol=1e-6)
        return
    reduce(op, x, None, 1)
    reduce(op, x, None, 0)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                                "ReduceLogSumExp", "ReduceSumSquare", "ReduceProd"])
def test_reduce_edge_values(op):
    # NaN anywhere; +inf with big finite values; magnitudes only; small and denormal values
    # (no row cancels huge values: that result depends on the order of additions)
    big_pos = np.where(np.isnan(EDGE_VALUES) | (EDGE_VALUES < -1e30), 0.0, EDGE_VALUES)
    tiny = np.where(np.abs(EDGE_VALUES) > 1.0, 0.25, EDGE_VALUES)
    tiny = np.nan_to_num(tiny)
    x = np.stack([EDGE_VALUES, big_pos, np.nan_to_num(np.abs(EDGE_VALUES)) / 4, tiny]).astype(np.float32)
    if op == "ReduceL2":  # the reference squares in float32 and overflows where mlrt does not
        x = x[[0, 1, 3]]
    reduce(op, x, [1], 0)
    reduce(op, np.ascontiguousarray(x.T), [0], 0)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin", "ReduceLogSumExp"])
@pytest.mark.parametrize("n", [31, 32, 77, 1000])
def test_reduce_extreme_long_lines(op, n):
    # long float32 lines go a vector at a time: NaN anywhere in them (a vector's lane, the
    # tail), +-inf, and lines whose extreme is in the tail
    x = data(op, (7, n))
    x[1, n // 2] = np.nan
    x[2, n - 1] = np.nan
    x[3, 0] = np.inf
    x[3, 5] = -np.inf
    x[4, n - 1] = 100.0
    x[5, n - 2] = -100.0
    x[6, :] = -np.inf if op != "ReduceLogSumExp" else 80.0  # the reference's log-sum-exp of -inf only is NaN
    reduce(op, x, [1], 0)
    reduce(op, x, None, 0)


def test_reduce_logsumexp_is_stable():
    x = np.array([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 1.0], [np.inf, 1.0, 2.0]], np.float32)
    reduce("ReduceLogSumExp", x, [1], 0)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                "ReduceL2"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float64])
def test_reduce_types(op, dtype):
    x = rng.integers(0 if np.dtype(dtype).kind == "u" else -9, 10, (4, 5, 6)).astype(dtype)
    if op == "ReduceProd":
        x = np.clip(x, -3, 3)
    reduce(op, x, [1], 1)
    reduce(op, x, [0, 2], 0)
    reduce(op, x, None, 0)


def test_reduce_sum_square_int64():
    x = rng.integers(-50, 50, (5, 7)).astype(np.int64)
    reduce("ReduceSumSquare", x, [1], 0)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_])
def test_reduce_max_min_small_types(op, dtype):
    x = rng.integers(-100 if dtype == np.int8 else 0, 2 if dtype == np.bool_ else 100, (6, 7)).astype(dtype)
    reduce(op, x, [1], 0, opset=20)
    reduce(op, x, [0], 1, opset=20)
    reduce(op, np.zeros((3, 0), dtype), [1], 0, opset=20)  # empty set: type min / max, False / True


def test_reduce_integer_mean_truncates():
    reduce("ReduceMean", np.array([[-7, 2], [7, 2], [5, 0]], np.int32), [1], 0)


def test_reduce_axes_from_initializer():
    # axes known when planning: the static plan path, not the eager one
    x = data("ReduceSum", (4, 6, 5))
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, x.shape)],
                              [helper.make_empty_tensor_value_info("y")],
                              [numpy_helper.from_array(np.array([0, 2], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    np.testing.assert_allclose(run_mlrt(model, [x])[0], x.sum(axis=(0, 2)), rtol=1e-5)


@pytest.mark.parametrize("axes", [[0, 0], [3], [-4]])
def test_reduce_bad_axes(axes):
    with pytest.raises(mlrt.MlrtError):
        reduce("ReduceMean", data("ReduceMean", (2, 3, 4)), axes, 1)


def test_reduce_logsum_int_not_supported():
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("ReduceLogSum", [np.ones((2, 2), np.int32)], opset=18), [np.ones((2, 2), np.int32)])


# -- ArgMax / ArgMin ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("last", [0, 1])
def test_arg(op, axis, keepdims, last):
    x = rng.integers(0, 4, (5, 300, 7)).astype(np.float32)  # many ties
    check_node(op, [x], {"axis": axis, "keepdims": keepdims, "select_last_index": last})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_arg_sizes(op, n):
    x = rng.standard_normal((3, n, 2)).astype(np.float32)
    check_node(op, [x], {"axis": 1})
    check_node(op, [x], {"axis": 0, "keepdims": 0})
    check_node(op, [rng.standard_normal((n,)).astype(np.float32)], {"axis": 0})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_edge_values(op, last):
    x = np.stack([EDGE_VALUES, np.roll(EDGE_VALUES, 5), np.nan_to_num(EDGE_VALUES)])
    check_node(op, [x], {"axis": 1, "select_last_index": last})
    check_node(op, [np.ascontiguousarray(x.T)], {"axis": 0, "select_last_index": last})
    nans = np.array([[1.0, np.nan, 3.0, np.nan]], np.float32)  # the first (last) NaN wins
    check_node(op, [nans], {"axis": 1, "select_last_index": last})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   np.float64])
def test_arg_types(op, dtype):
    x = rng.integers(0, 5, (4, 6, 3)).astype(dtype)
    check_node(op, [x], {"axis": 1, "select_last_index": 1})
    check_node(op, [x], {"axis": 2, "keepdims": 0})


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_old_opset_and_empty(op):
    check_node(op, [rng.standard_normal((3, 4)).astype(np.float32)], {"axis": 1}, opset=11)
    check_node(op, [np.zeros((0, 4), np.float32)], {"axis": 1})
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.zeros((3, 0), np.float32)], {"axis": 1})
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.zeros((3, 4), np.float32)], {"axis": 2})
    with pytest.raises(mlrt.MlrtError):
        check_node(op, [np.array(1.0, np.float32)], {"axis": 0})


def test_reduce_kernel_checks_its_params():
    # the C kernel refuses a view that does not match its output
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    x = np.ones((4, 5), np.float32)
    y = np.empty((4,), np.float32)
    ins, outs = ffi.new("mlrt_tensor[1]"), ffi.new("mlrt_tensor[1]")
    _lib.fill_tensor(ins[0], x.dtype, x.shape, None, _lib.array_pointer(x))
    _lib.fill_tensor(outs[0], y.dtype, y.shape, None, _lib.array_pointer(y))
    k = _lib.find_kernel("", "ReduceSum", 13, x.dtype)
    for n_kept in (0, 2, -1):  # 1 output element / no reduced dim / nonsense
        keep, p, size = _lib.pack_params("mlrt_reduce_params", {"n_kept": n_kept})
        assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 1, outs, 1, p, size) == 1
    keep, p, size = _lib.pack_params("mlrt_reduce_params", {"n_kept": 1})
    assert lib.mlrt_kernel_run(k, ffi.NULL, ins, 1, outs, 1, p, size) == 0
    np.testing.assert_array_equal(y, np.full(4, 5.0, np.float32))
