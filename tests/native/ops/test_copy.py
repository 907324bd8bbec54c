"""The strided-copy family against onnx.reference: Identity, Reshape, Flatten, Squeeze,
Unsqueeze, Transpose, Expand, Dropout, Tile, DepthToSpace, SpaceToDepth, Slice, Trilu,
ReverseSequence.  Every element type (data movement is exact), edge sizes, rank 0,
empty tensors, old-opset attribute forms, and bad inputs."""

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
from oracle import EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)
BFLOAT16 = helper.tensor_dtype_to_np_dtype(TensorProto.BFLOAT16)
DTYPES = [np.float32, np.float64, np.float16, BFLOAT16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64,
          np.uint32, np.uint64, np.bool_]
I64 = np.int64


def data(shape, dtype=np.float32):
    """Random values of `dtype`; floats include inf, NaN, -0.0 and denormals."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    flat = a.reshape(-1)
    k = min(flat.size, len(EDGE_VALUES))
    edge = EDGE_VALUES[:k]
    if dtype == BFLOAT16:  # oracle.assert_same compares bfloat16 (kind "V") exactly, where NaN != NaN
        edge = np.nan_to_num(edge, nan=7.0)
    with np.errstate(over="ignore"):
        flat[:k] = edge.astype(dtype)  # float16: +-3.4e38 become +-inf
    return a


def fails(op, inputs, attrs=None, opset=None, n_outputs=1):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model(op, inputs, attrs, n_outputs, opset), inputs)


# ---- Identity ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (13,), (2, 127), (3, 0, 2)])
def test_identity(dtype, shape):
    check_node("Identity", [data(shape, dtype)])


# ---- Reshape -------------------------------------------------------------------------
@pytest.mark.parametrize("shape,target", [((2, 3, 4), (4, 6)), ((2, 3, 4), (-1,)), ((2, 3, 4), (0, -1)),
                                          ((2, 3, 4), (0, 0, 2, 2)), ((1,), ()), ((), (1, 1)),
                                          ((0, 3), (3, -1)), ((13, 127), (127, -1, 1))])
def test_reshape(shape, target):
    check_node("Reshape", [data(shape), np.array(target, I64)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_types(dtype):
    check_node("Reshape", [data((4, 6), dtype), np.array([3, -1, 2], I64)])


def test_reshape_allowzero():
    check_node("Reshape", [data((0, 3, 4)), np.array([3, 4, 0], I64)], {"allowzero": 1})
    fails("Reshape", [data((2, 3)), np.array([0, 6], I64)], {"allowzero": 1})


def test_reshape_old_opsets():
    x = data((2, 3, 4))
    got = run_mlrt(make_model("Reshape", [x], {"shape": [4, -1]}, opset=4), [x])  # onnx.reference lacks opset 4
    np.testing.assert_array_equal(got[0], x.reshape(4, -1))
    check_node("Reshape", [x, np.array([0, 12], I64)], opset=5)


def test_reshape_empty_with_inferred_dim():
    fails("Reshape", [data((0, 3)), np.array([0, -1], I64)])  # -1 next to a 0 dimension is ambiguous


@pytest.mark.parametrize("target", [(5, -1), (-1, -1), (7,), (0, 0, 0, 0), (-2, 12)])
def test_reshape_bad(target):
    fails("Reshape", [data((2, 3, 4)), np.array(target, I64)])


# ---- Flatten -------------------------------------------------------------------------
@pytest.mark.parametrize("axis", range(-4, 5))
@pytest.mark.parametrize("opset", [9, 13])
def test_flatten(axis, opset):
    if axis < 0 and opset < 11:
        return
    check_node("Flatten", [data((2, 3, 0 if axis == 2 else 4, 5))], {"axis": axis}, opset=opset)


def test_flatten_bad_axis():
    fails("Flatten", [data((2, 3))], {"axis": 3})


# ---- Squeeze / Unsqueeze ----------------------------------------------------------------
@pytest.mark.parametrize("axes", [None, [0], [-1], [0, 3], [3, 0]])
def test_squeeze(axes):
    x = data((1, 3, 4, 1))
    check_node("Squeeze", [x] + ([np.array(axes, I64)] if axes is not None else []))
    # opset 11 (attribute); onnx.reference squeezes one axis after the other, so compare with numpy
    got = run_mlrt(make_model("Squeeze", [x], {"axes": axes} if axes is not None else {}, opset=11), [x])
    np.testing.assert_array_equal(got[0], np.squeeze(x, tuple(axes) if axes is not None else None))


def test_squeeze_bad():
    fails("Squeeze", [data((1, 3)), np.array([1], I64)])
    fails("Squeeze", [data((1, 3)), np.array([2], I64)])


@pytest.mark.parametrize("axes", [[0], [1], [-1], [0, 4], [4, 0, 2], [-5, -1]])
def test_unsqueeze(axes):
    x = data((3, 4, 5))
    check_node("Unsqueeze", [x, np.array(axes, I64)])
    got = run_mlrt(make_model("Unsqueeze", [x], {"axes": axes}, opset=11), [x])  # attribute form
    np.testing.assert_array_equal(got[0], np.expand_dims(x, tuple(axes)))


def test_unsqueeze_scalar_and_bad():
    check_node("Unsqueeze", [data(()), np.array([0, 1], I64)])
    fails("Unsqueeze", [data((3,)), np.array([0, 0], I64)])
    fails("Unsqueeze", [data((3,)), np.array([3], I64)])


# ---- Transpose -------------------------------------------------------------------------
@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_transpose_3d(perm):
    check_node("Transpose", [data((3, 4, 5))], {"perm": list(perm)})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,perm", [((13, 127), None), ((127, 13), [1, 0]), ((2, 9, 33, 5), [0, 2, 3, 1]),
                                        ((2, 5, 9, 33), [0, 3, 1, 2]), ((1, 3, 17, 19), [0, 2, 3, 1]),
                                        ((4, 7, 2, 6), [2, 0, 3, 1]), ((64, 64), None), ((1000, 2), None)])
def test_transpose_types_sizes(dtype, shape, perm):
    check_node("Transpose", [data(shape, dtype)], {"perm": perm} if perm else {})


@pytest.mark.parametrize("shape", [(), (0, 3), (1, 1, 5), (2, 1, 3, 1)])
def test_transpose_degenerate(shape):
    check_node("Transpose", [data(shape)])


def test_transpose_large_threads():
    check_node("Transpose", [data((1, 64, 96, 80))], {"perm": [0, 2, 3, 1]})
    check_node("Transpose", [data((512, 520), np.float64)])


def test_transpose_bad_perm():
    fails("Transpose", [data((2, 3))], {"perm": [0, 0]})
    fails("Transpose", [data((2, 3))], {"perm": [0, 1, 2]})


# ---- Expand ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape,target", [((3, 1), (2, 1, 6)), ((1,), (13,)), ((), (2, 3)), ((4, 1, 5), (4, 127, 5)),
                                          ((2, 3), (1, 1)), ((3,), (0, 3)), ((1, 1), (2, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_expand(shape, target, dtype):
    check_node("Expand", [data(shape, dtype), np.array(target, I64)])


def test_expand_of_intermediate():
    x = data((1, 4))
    nodes = [helper.make_node("Transpose", ["x"], ["r"]), helper.make_node("Expand", ["r", "s"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, x.shape)],
                              [helper.make_tensor_value_info("y", 1, None)],
                              initializer=[numpy_helper.from_array(np.array([4, 1000], I64), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    np.testing.assert_array_equal(run_mlrt(model, [x])[0], np.broadcast_to(x.T, (4, 1000)))


def test_expand_bad():
    fails("Expand", [data((3,)), np.array([2], I64)])


# ---- Dropout ---------------------------------------------------------------------------
@pytest.mark.parametrize("opset", [10, 12, 13, 22])
@pytest.mark.parametrize("n_outputs", [1, 2])
def test_dropout_inference(opset, n_outputs):
    x = data((3, 13))
    check_node("Dropout", [x], n_outputs=n_outputs, opset=opset)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_dropout_types_and_inputs(dtype):
    x = data((2, 127), dtype)
    check_node("Dropout", [x, np.array(0.3, dtype)], n_outputs=2)
    check_node("Dropout", [x, np.array(0.3, dtype), np.array(False)], n_outputs=2)
    check_node("Dropout", [x, np.array(0.0, dtype), np.array(True)], n_outputs=2)


@pytest.mark.parametrize("opset", [6, 7])
def test_dropout_old_mask_type(opset):
    # before opset 10 the spec types the mask T (the input's type); onnx.reference returns bool
    x = data((4, 5))
    y, mask = run_mlrt(make_model("Dropout", [x], n_outputs=2, opset=opset), [x])
    np.testing.assert_array_equal(y, x)
    assert mask.dtype == np.float32 and mask.shape == x.shape and (mask == 1).all()


def test_dropout_training_not_supported():
    with pytest.raises(mlrt.NotImplemented):
        x = data((3,))
        run_mlrt(make_model("Dropout", [x, np.array(0.5, np.float32), np.array(True)]),
                 [x, np.array(0.5, np.float32), np.array(True)])


# ---- Tile ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,reps", [((3,), (4,)), ((2, 3), (1, 1)), ((2, 3), (3, 2)), ((2, 1, 3), (2, 13, 1)),
                                        ((2, 3), (0, 2)), ((0, 3), (2, 2)), ((1, 127), (3, 1))])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int64, np.bool_])
def test_tile(shape, reps, dtype):
    check_node("Tile", [data(shape, dtype), np.array(reps, I64)])


def test_tile_opset1():
    x = data((2, 3))
    args = [x, np.array(3, I64), np.array(1, I64)]  # opset 1: `tiles` copies along `axis`
    np.testing.assert_array_equal(run_mlrt(make_model("Tile", args, opset=1), args)[0], np.tile(x, (1, 3)))


def test_tile_bad():
    fails("Tile", [data((2, 3)), np.array([2], I64)])
    fails("Tile", [data((2, 3)), np.array([2, -1], I64)])


# ---- DepthToSpace / SpaceToDepth -----------------------------------------------------------
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("bs,shape", [(2, (1, 8, 3, 5)), (3, (2, 18, 2, 2)), (1, (1, 3, 4, 4))])
def test_depth_to_space(mode, bs, shape):
    check_node("DepthToSpace", [data(shape)], {"blocksize": bs, "mode": mode})


@pytest.mark.parametrize("bs,shape", [(2, (1, 3, 4, 6)), (3, (2, 2, 9, 3))])
def test_space_to_depth(bs, shape):
    check_node("SpaceToDepth", [data(shape, np.int16)], {"blocksize": bs}, opset=13)
    for mode in ("DCR", "CRD"):
        check_node("SpaceToDepth", [data(shape)], {"blocksize": bs, "mode": mode}, opset=28)


def test_depth_space_bad():
    fails("DepthToSpace", [data((1, 6, 2, 2))], {"blocksize": 2})
    fails("SpaceToDepth", [data((1, 1, 3, 4))], {"blocksize": 2})


# ---- Slice --------------------------------------------------------------------------------
BIG = 2 ** 63 - 1


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([0], [-1], [0], [1]), ([-1], [-100], [0], [-1]), ([19, 9], [0, -20], [0, 1], [-3, -2]),
    ([100], [200], [1], [1]), ([2], [BIG], [-1], [2]), ([-BIG - 1], [BIG], [1], [3]),
    ([1, 2, 0], [5, 8, 4], [0, 1, 2], [1, 1, 1]), ([5], [5], [0], [1]), ([3], [-BIG - 1], [2], [-1])])
def test_slice(starts, ends, axes, steps):
    x = data((20, 10, 5))
    check_node("Slice", [x, np.array(starts, I64), np.array(ends, I64), np.array(axes, I64), np.array(steps, I64)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_types(dtype):
    x = data((13, 127), dtype)
    check_node("Slice", [x, np.array([1, -3], np.int32), np.array([12, 2], np.int32), np.array([0, 1], np.int32),
                         np.array([2, -5], np.int32)])


def test_slice_default_axes_steps_and_old_opset():
    x = data((6, 7))
    check_node("Slice", [x, np.array([1, 2], I64), np.array([4, -1], I64)])
    check_node("Slice", [x], {"starts": [1, 2], "ends": [4, 100]}, opset=9)
    check_node("Slice", [x], {"starts": [-2], "ends": [10], "axes": [1]}, opset=1)


def test_slice_of_intermediate_negative_step():
    x = data((4, 6))
    nodes = [helper.make_node("Transpose", ["x"], ["r"]), helper.make_node("Slice", ["r", "s", "e", "a", "st"], ["y"])]
    inits = [numpy_helper.from_array(np.array(v, I64), n) for v, n in [([-1, 4], "s"), ([-100, 0], "e"),
                                                                         ([0, 1], "a"), ([-1, -2], "st")]]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, x.shape)],
                              [helper.make_tensor_value_info("y", 1, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    np.testing.assert_array_equal(run_mlrt(model, [x])[0], x.T[::-1, 4:0:-2])


def test_slice_bad():
    fails("Slice", [data((4,)), np.array([0], I64), np.array([2], I64), np.array([0], I64), np.array([0], I64)])
    fails("Slice", [data((4,)), np.array([0], I64), np.array([2], I64), np.array([1], I64)])
    fails("Slice", [data((4, 4)), np.array([0, 0], I64), np.array([2, 2], I64), np.array([1, -1], I64)])


# ---- Trilu ----------------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 1, -1, 3, -4, 100, -100])
@pytest.mark.parametrize("shape", [(4, 5), (3, 3, 3), (2, 7, 2), (0, 3), (1, 1)])
def test_trilu(upper, k, shape):
    inputs = [data(shape, np.int64)] + ([np.array(k, I64)] if k is not None else [])
    check_node("Trilu", inputs, {"upper": upper})


@pytest.mark.parametrize("dtype", DTYPES)
def test_trilu_types(dtype):
    check_node("Trilu", [data((13, 9), dtype), np.array(-2, I64)], {"upper": 0})


def test_trilu_bad():
    fails("Trilu", [data((4,))])


# ---- ReverseSequence ----------------------------------------------------------------------------
@pytest.mark.parametrize("batch_axis,time_axis", [(0, 1), (1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
def test_reverse_sequence(batch_axis, time_axis, dtype):
    x = data((4, 5, 3), dtype)
    steps = x.shape[time_axis]
    lens = np.array([min(i, steps) for i in range(x.shape[batch_axis])], I64)
    check_node("ReverseSequence", [x, lens], {"batch_axis": batch_axis, "time_axis": time_axis})


def test_reverse_sequence_bad_lens():
    x = data((4, 3))
    fails("ReverseSequence", [x, np.array([1, 5, 1], I64)], {"batch_axis": 1, "time_axis": 0})
    fails("ReverseSequence", [x, np.array([1, 2], I64)], {"batch_axis": 1, "time_axis": 0})
