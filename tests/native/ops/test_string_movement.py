"""Data-movement operators on string tensors, against onnx.reference.

Strings move through the same int64 kernels as numbers (each op's `moves` inputs are
replaced by element numbers, plan/eager.py), so the shape rules and index checks are
the ones the numeric tests already cover; these tests check that the strings land
where onnx.reference puts them, in every way a string tensor can reach the op: fed,
from an initializer next to a fed index (planning must fall back to node by node),
and all-constant (folded while planning)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
from mlrt.native.ops import lookup
from mlrt.native.plan.eager import run_eager
from oracle import assert_same, make_model, run_mlrt, run_reference

I64 = np.int64
WORDS = ["red", "", "grün", "blue", "日本", "a b", "x" * 40, "ÿ", "green", "n\0ul", "tab\t", "Z", "zz"]


def strings(shape, seed=0):
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    return np.array([WORDS[i] + str(k) for k, i in enumerate(rng.integers(0, len(WORDS), n))],
                    dtype=object).reshape(shape)


def check(op_type, inputs, attrs=None, n_outputs=1, opset=18):
    model = make_model(op_type, inputs, attrs, n_outputs, opset)
    got = run_mlrt(model, inputs)
    expected = run_reference(model, inputs)
    assert len(got) == len(expected) == n_outputs
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == object, f"{op_type} output {i}: dtype {g.dtype}, expected object strings"
        assert_same(g.astype(str), np.asarray(e).astype(str), 0, 0, f"{op_type} output {i}")
    return got


# -- Gather family -----------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("ind_shape", [(), (1,), (4,), (2, 3), (0,), (13,)])
def test_gather(axis, ind_shape):
    x = strings((5, 6, 7))
    n = x.shape[axis]
    ind = np.random.default_rng(1).integers(-n, n, ind_shape).astype(I64)
    check("Gather", [x, ind], {"axis": axis})


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_gather_columns(itype):
    """skl2onnx's ColumnTransformer: string columns picked with Gather(axis=1)."""
    check("Gather", [strings((60, 3)), np.array([0, 2], itype)], {"axis": 1})
    check("Gather", [strings((60, 3)), np.array(-1, itype)], {"axis": 1})


def test_gather_empty_data():
    check("Gather", [strings((0, 3)), np.array([2, -3], I64)], {"axis": 1})


@pytest.mark.parametrize("index", [5, -6, 100])
def test_gather_out_of_range(index):
    x, ind = strings((5, 2)), np.array([0, index], I64)
    with pytest.raises(mlrt.InvalidArgument, match="out of range"):
        run_mlrt(make_model("Gather", [x, ind]), [x, ind])


@pytest.mark.parametrize("axis", [0, 1])  # (onnx.reference mis-slices shapes for axis -1)
def test_gather_elements(axis):
    x = strings((4, 5))
    n = x.shape[axis]
    ind = np.random.default_rng(2).integers(-n, n, (3, 5) if axis == 0 else (4, 3)).astype(I64)
    check("GatherElements", [x, ind], {"axis": axis})


def test_gather_elements_out_of_range():
    x, ind = strings((2, 2)), np.array([[0, 2]], I64)
    with pytest.raises(mlrt.InvalidArgument, match="out of range"):
        run_mlrt(make_model("GatherElements", [x, ind], {"axis": 1}), [x, ind])


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd(batch_dims):
    x = strings((3, 4, 2))
    ind = np.array([[[1, 0], [-1, 1]], [[0, 1], [-3, 0]], [[2, 1], [0, 0]]], I64)
    check("GatherND", [x, ind], {"batch_dims": batch_dims})


# -- the other movement ops ----------------------------------------------------------------
def test_slice():
    x = strings((6, 5))
    check("Slice", [x, np.array([1, -1], I64), np.array([5, -6], I64), np.array([0, 1], I64), np.array([2, -2], I64)])
    check("Slice", [x, np.array([10], I64), np.array([20], I64)])  # empty


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    check("Concat", [strings((2, 3), 1), strings((2, 3), 2), strings((2, 3), 3)], {"axis": axis})


def test_concat_uneven():
    check("Concat", [strings((2, 1), 1), strings((2, 0), 2), strings((2, 4), 3)], {"axis": 1})


def test_reshape_family():
    x = strings((2, 3, 4))
    check("Reshape", [x, np.array([4, 0, -1], I64)])
    check("Flatten", [x], {"axis": 2})
    check("Squeeze", [x.reshape(1, 2, 1, 12), np.array([0, 2], I64)])
    check("Unsqueeze", [x, np.array([-1, 0], I64)])
    check("Identity", [x])


@pytest.mark.parametrize("perm", [None, [1, 0, 2], [2, 0, 1]])
def test_transpose(perm):
    check("Transpose", [strings((2, 3, 4))], {} if perm is None else {"perm": perm})


def test_expand_tile():
    check("Expand", [strings((3, 1)), np.array([2, 3, 4], I64)])
    check("Tile", [strings((2, 3)), np.array([3, 2], I64)])


def test_split():
    x = strings((4, 7))
    check("Split", [x, np.array([2, 0, 5], I64)], {"axis": 1}, n_outputs=3)
    check("Split", [x], {"axis": 0}, n_outputs=2)


def test_where():
    cond = np.random.default_rng(3).random((3, 4)) > 0.5
    check("Where", [cond, strings((3, 4), 1), strings((1, 4), 2)])


def test_depth_to_space_reverse_sequence():
    check("DepthToSpace", [strings((1, 8, 2, 3))], {"blocksize": 2, "mode": "CRD"})
    check("ReverseSequence", [strings((4, 3)), np.array([4, 1, 2], I64)], {"batch_axis": 1, "time_axis": 0})


# -- strings that do not come from a feed --------------------------------------------------
def _string_table_model(indices=None):
    table = numpy_helper.from_array(strings((4, 2)), "table")
    inits, inputs = [table], []
    if indices is None:
        inputs.append(helper.make_tensor_value_info("i", TensorProto.INT64, [None]))
    else:
        inits.append(numpy_helper.from_array(indices, "i"))
    nodes = [helper.make_node("Gather", ["table", "i"], ["g"]),
             helper.make_node("Transpose", ["g"], ["y"])]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.STRING, None)],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_string_initializer_fed_indices():
    """A string initializer gathered by a fed index: the plan falls back to node by node."""
    model = _string_table_model()
    sess = mlrt.lowlevel.InferenceSession(model.SerializeToString())
    for ind in (np.array([3, -4, 1], I64), np.array([], I64)):
        got = sess.run(None, {"i": ind})[0]
        assert_same(got.astype(str), strings((4, 2))[ind].T.astype(str), 0, 0, "Gather(table, i)")
    with pytest.raises(mlrt.InvalidArgument, match="out of range"):
        sess.run(None, {"i": np.array([4], I64)})


def test_string_constants_folded():
    model = _string_table_model(np.array([2, 0], I64))
    got = mlrt.lowlevel.InferenceSession(model.SerializeToString()).run(None, {})[0]
    assert_same(got.astype(str), strings((4, 2))[[2, 0]].T.astype(str), 0, 0, "folded Gather")


def test_mixed_types_refused():
    """Where's x holds strings and y numbers: an error naming both, not a wrong answer."""
    op = lookup("", "Where", 16)(helper.make_node("Where", ["c", "x", "y"], ["z"]), 16)
    with pytest.raises(mlrt.InvalidModel, match="input 2 is float32 but input 1 holds strings"):
        run_eager(op, [np.array([True]), strings((1,)), np.array([1.0], np.float32)], None)
