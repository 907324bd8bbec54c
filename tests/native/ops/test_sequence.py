"""Sequence operators against onnx.reference: SequenceEmpty/Construct/Insert/At/Erase/
Length, SplitToSequence, ConcatFromSequence (SequenceMap is in test_control_flow)."""

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import mlrt
import mlrt.lowlevel as ml
from oracle import assert_same

F, I64 = TensorProto.FLOAT, TensorProto.INT64
rng = np.random.default_rng(0)


def info(name, value):
    """A graph input declared from the value fed to it: a tensor, or a sequence (list)."""
    if isinstance(value, list):
        elem = helper.np_dtype_to_tensor_dtype(value[0].dtype) if value else F
        return helper.make_tensor_sequence_value_info(name, elem, None)
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)


def model(nodes, feeds: dict, outputs: list, opset=17):
    g = helper.make_graph(nodes, "seq_test", [info(n, v) for n, v in feeds.items()],
                          [helper.make_empty_tensor_value_info(n) for n in outputs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def same(got, expected, where="output"):
    if isinstance(expected, list):
        assert isinstance(got, list), f"{where}: got {type(got).__name__}, expected a sequence"
        assert len(got) == len(expected), f"{where}: {len(got)} tensors, expected {len(expected)}"
        for k, (g, e) in enumerate(zip(got, expected)):
            same(g, e, f"{where}[{k}]")
    else:
        assert_same(got, expected, 0, 0, where)


def run_both(m, feeds):
    got = ml.InferenceSession(m.SerializeToString()).run(None, feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ReferenceEvaluator(m).run(None, feeds)
    for k, (g, e) in enumerate(zip(got, expected)):
        same(g, e, f"output {k}")
    return got


def run_mlrt(m, feeds):
    return ml.InferenceSession(m.SerializeToString()).run(None, feeds)


def tensors(*shapes, dtype=np.float32):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def test_empty_then_insert():
    nodes = [helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
             helper.make_node("SequenceInsert", ["s0", "a"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "b"], ["s2"]),
             helper.make_node("SequenceLength", ["s2"], ["n"])]
    a, b = tensors((2, 3), (4,))
    feeds = {"a": a, "b": b}
    got = run_both(model(nodes, feeds, ["s2", "n"]), feeds)
    assert got[1].dtype == np.int64 and got[1].shape == ()


def test_empty_alone():
    m = model([helper.make_node("SequenceEmpty", [], ["s"], dtype=TensorProto.INT32)], {}, ["s"])
    assert run_mlrt(m, {}) == [[]]


@pytest.mark.parametrize("count", [1, 2, 5])
def test_construct_and_length(count):
    names = [f"x{i}" for i in range(count)]
    nodes = [helper.make_node("SequenceConstruct", names, ["s"]), helper.make_node("SequenceLength", ["s"], ["n"])]
    feeds = dict(zip(names, tensors(*[(i + 1, 2) for i in range(count)])))
    run_both(model(nodes, feeds, ["s", "n"]), feeds)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8])
def test_construct_dtypes(dtype):
    feeds = {k: rng.integers(0, 3, (3,)).astype(dtype) for k in "ab"}
    run_both(model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"])], feeds, ["s"]), feeds)


def _abc(*shapes):
    return dict(zip("abc", tensors(*shapes)))


@pytest.mark.parametrize("pos", [0, 1, 2, -1, -3])
def test_at(pos):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceAt", ["s", "p"], ["y"])]
    feeds = {**_abc((1,), (2, 2), ()), "p": np.array(pos, np.int64)}
    run_both(model(nodes, feeds, ["y"]), feeds)


@pytest.mark.parametrize("pos", [3, -4])
def test_at_out_of_range(pos):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceAt", ["s", "p"], ["y"])]
    feeds = {**_abc((1,), (2,), (3,)), "p": np.array(pos, np.int64)}
    with pytest.raises(mlrt.MlrtError, match="out of range"):
        run_mlrt(model(nodes, feeds, ["y"]), feeds)


@pytest.mark.parametrize("pos", [None, 0, 1, -1, -2])
def test_erase(pos):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("SequenceErase", ["s"] + (["p"] if pos is not None else []), ["t"])]
    feeds = _abc((2,), (3,))
    if pos is not None:
        feeds["p"] = np.array(pos, np.int32)
    run_both(model(nodes, feeds, ["t"]), feeds)


@pytest.mark.parametrize("pos", [None, 0, 1, 2, -1, -2])
def test_insert_positions(pos):
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("SequenceInsert", ["s", "c"] + (["p"] if pos is not None else []), ["t"])]
    feeds = _abc((1,), (2,), (3,))
    if pos is not None:
        feeds["p"] = np.array(pos, np.int64)
    got = run_mlrt(model(nodes, feeds, ["t"]), feeds)[0]
    at = 2 if pos is None else (pos + 2 if pos < 0 else pos)  # the spec's [-n, n]; n appends
    expected = [feeds["a"], feeds["b"]]
    expected.insert(at, feeds["c"])
    same(got, expected)
    if pos is None or pos < 2:  # onnx.reference wraps position n around to the front
        run_both(model(nodes, feeds, ["t"]), feeds)


def test_insert_into_sequence_input_keeps_input():
    feeds = {"s": tensors((2,), (3,)), "x": tensors((1,))[0]}
    got = run_both(model([helper.make_node("SequenceInsert", ["s", "x"], ["t"])], feeds, ["t"]), feeds)
    assert len(feeds["s"]) == 2 and len(got[0]) == 3


def test_insert_position_out_of_range():
    feeds = {"s": tensors((2,), (3,)), "x": tensors((1,))[0], "p": np.array(3, np.int64)}
    with pytest.raises(mlrt.MlrtError, match="out of range"):
        run_mlrt(model([helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"])], feeds, ["t"]), feeds)


def test_insert_wrong_dtype():
    feeds = {"s": tensors((2,)), "x": np.zeros(2, np.int32)}
    with pytest.raises(mlrt.MlrtError, match="element type"):
        run_mlrt(model([helper.make_node("SequenceInsert", ["s", "x"], ["t"])], feeds, ["t"]), feeds)


def test_construct_mixed_dtypes():
    feeds = {"a": np.zeros(1, np.float32), "b": np.zeros(1, np.float64)}
    with pytest.raises(mlrt.MlrtError, match="element type"):
        run_mlrt(model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"])], feeds, ["s"]), feeds)


def test_erase_from_empty():
    nodes = [helper.make_node("SequenceEmpty", [], ["s"]), helper.make_node("SequenceErase", ["s"], ["t"])]
    with pytest.raises(mlrt.MlrtError, match="empty"):
        run_mlrt(model(nodes, {}, ["t"]), {})


def test_sequence_input_must_be_a_list():
    m = model([helper.make_node("SequenceLength", ["s"], ["n"])], {"s": tensors((2,))}, ["n"])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(m, {"s": np.zeros(3, np.float32)})
    assert run_mlrt(m, {"s": []})[0] == 0


@pytest.mark.parametrize("shape,axis,keepdims", [((4, 3), 0, 1), ((4, 3), 1, 0), ((2, 3, 5), -1, 0),
                                                   ((1,), 0, 1), ((0, 3), 0, 1), ((13, 2), 0, 0)])
def test_split_to_sequence_default(shape, axis, keepdims):
    feeds = {"x": tensors(shape)[0]}
    m = model([helper.make_node("SplitToSequence", ["x"], ["s"], axis=axis, keepdims=keepdims)], feeds, ["s"])
    run_both(m, feeds)


@pytest.mark.parametrize("shape,axis,split", [((6, 2), 0, 2), ((7, 2), 0, 3), ((2, 127), 1, 13), ((3, 4), 1, 5),
                                                ((6, 2), 0, [1, 2, 3]), ((6, 2), -2, [6]), ((3, 4), 1, [0, 4]),
                                                ((2, 9), 1, [4, 5])])
def test_split_to_sequence_split(shape, axis, split):
    feeds = {"x": tensors(shape)[0], "split": np.array(split, np.int64)}
    m = model([helper.make_node("SplitToSequence", ["x", "split"], ["s"], axis=axis)], feeds, ["s"])
    run_both(m, feeds)


@pytest.mark.parametrize("split", [0, [1, 1], [-1, 7]])
def test_split_to_sequence_bad_split(split):
    feeds = {"x": np.zeros((6,), np.float32), "split": np.array(split, np.int64)}
    m = model([helper.make_node("SplitToSequence", ["x", "split"], ["s"])], feeds, ["s"])
    with pytest.raises(mlrt.MlrtError, match="split"):
        run_mlrt(m, feeds)


@pytest.mark.parametrize("shapes,axis,new_axis", [([(2, 3), (4, 3)], 0, 0), ([(2, 3), (2, 1), (2, 5)], -1, 0),
                                                   ([(2, 3), (2, 3)], 0, 1), ([(2, 3), (2, 3)], 2, 1),
                                                   ([(2, 3), (2, 3)], -1, 1), ([(), ()], 0, 1), ([(5,)], 0, 0),
                                                   ([(0, 3), (2, 3)], 0, 0)])
def test_concat_from_sequence(shapes, axis, new_axis):
    feeds = {"s": tensors(*shapes)}
    m = model([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)], feeds, ["y"])
    run_both(m, feeds)


@pytest.mark.parametrize("shapes,axis,new_axis", [([(2, 3), (2, 4)], 0, 0), ([(2, 3), (2, 4)], 0, 1),
                                                   ([(2, 3)], 2, 0), ([(2, 3)], 3, 1), ([], 0, 0)])
def test_concat_from_sequence_bad(shapes, axis, new_axis):
    feeds = {"s": tensors(*shapes)}
    m = model([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)], feeds, ["y"])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(m, feeds)


def test_split_then_concat_roundtrip():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1, new_axis=1)]
    feeds = {"x": tensors((3, 4, 2))[0]}
    got = run_both(model(nodes, feeds, ["y"]), feeds)
    np.testing.assert_array_equal(got[0], feeds["x"])
