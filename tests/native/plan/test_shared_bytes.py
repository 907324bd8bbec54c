"""Values a native plan keeps in another value's bytes (plan/native.py, _shared_bytes),
as their operators declare (Op.aliases, ops/_base.py): a Concat's inputs written
straight into its slices, a Split's outputs read from its input's slices, a Reshape's
output in its input's bytes.  Each case checks which values share (plan.shared: name ->
(value holding it, byte offset)) and that the answers are onnx.reference's exactly; the
cases that must not share check that they do not."""

from types import SimpleNamespace

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import mlrt.lowlevel as ml
from mlrt.native.ops import Alias, AliasKind, Info, Launch, Op, View
from mlrt.native.ops.concat import Concat
from mlrt.native.ops.split import Split
from mlrt.native.ops.squeeze import Squeeze
from mlrt.native.plan.native import _shared_bytes


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, T.FLOAT, None) for n in outputs], list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds, optimize=True):
    """Run on mlrt and onnx.reference (answers equal exactly); the plan's shared values."""
    data = model.SerializeToString()
    so = ml.SessionOptions()
    if not optimize:  # (the optimizer drops Identity and Dropout)
        so.graph_optimization_level = ml.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ml.InferenceSession(data, so)
    got = sess.run(None, feeds)
    want = ReferenceEvaluator(model).run(None, feeds)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    got2 = sess.run(None, feeds)  # a second run, on the reused arena
    for g, w in zip(got2, want):
        np.testing.assert_array_equal(g, w)
    plan = sess._runnable.pieces[0].runnable._make_plan(feeds)
    return plan.shared


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_concat_inputs_are_written_into_its_slices_and_outlive_it():
    # a and b become c's halves; a is read again after c is gone and several values
    # were made since: c's bytes must stay alive as long as a is read
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"]),
             helper.make_node("Concat", ["a", "b"], ["c"], axis=1), helper.make_node("Add", ["c", "c"], ["d"]),
             helper.make_node("Neg", ["d"], ["t1"]), helper.make_node("Abs", ["t1"], ["t2"]),
             helper.make_node("Split", ["t2"], ["s1", "s2"], axis=1), helper.make_node("Mul", ["a", "s1"], ["e"])]
    shared = _check(_model(nodes, [("x", [1, 4, 8, 8])], ["s2", "e"]), {"x": _x(1, 4, 8, 8)})
    assert shared == {"a": ("c", 0), "b": ("c", 4 * 64 * 4)}  # (s2 is a graph output: the Split copies)


def test_concat_of_concat_and_a_graph_output_concat():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"]),
             helper.make_node("Abs", ["x"], ["d"]), helper.make_node("Concat", ["a", "b"], ["c1"], axis=2),
             helper.make_node("Neg", ["x"], ["e"]),
             helper.make_node("Concat", ["c1", "d", "e"], ["y"], axis=2)]
    shared = _check(_model(nodes, [("x", [1, 1, 16, 8])], ["y"]), {"x": _x(1, 1, 16, 8)})
    # y is the graph's output: a, b, d, e are written straight into the caller's array
    piece = 16 * 8 * 4
    assert shared == {"a": ("y", 0), "b": ("y", piece), "c1": ("y", 0), "d": ("y", 2 * piece), "e": ("y", 3 * piece)}


@pytest.mark.parametrize("case", ["batch of 2", "slices off 64-byte lines", "a graph input", "twice",
                                  "a graph output", "a constant"])
def test_concat_that_must_copy(case):
    shape, inputs, outputs = [1, 4, 8, 8], ["a", "b"], ["y"]
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    inits = []
    if case == "batch of 2":
        shape = [2, 4, 8, 8]
    elif case == "slices off 64-byte lines":
        shape = [1, 3, 5, 1]
    elif case == "a graph input":
        inputs = ["a", "x"]
    elif case == "twice":
        inputs = ["a", "b", "a"]
    elif case == "a graph output":
        outputs = ["y", "a"]
    elif case == "a constant":
        inits = [numpy_helper.from_array(_x(*shape, seed=1), "k")]
        inputs = ["a", "k"]
    nodes.append(helper.make_node("Concat", inputs, ["c"], axis=1))
    nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    shared = _check(_model(nodes, [("x", shape)], outputs, inits), {"x": _x(*shape)})
    assert shared == {}


def test_split_outputs_are_slices_of_its_input():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Split", ["r"], ["s1", "s2"], axis=1),
             helper.make_node("Neg", ["s1"], ["y1"]), helper.make_node("Abs", ["s2"], ["t"]),
             helper.make_node("Add", ["t", "s1"], ["y2"])]
    shared = _check(_model(nodes, [("x", [1, 4, 4, 4])], ["y1", "y2"]), {"x": _x(1, 4, 4, 4)})
    assert shared == {"s1": ("r", 0), "s2": ("r", 2 * 16 * 4)}


def test_split_of_a_graph_input_and_split_outputs_that_are_graph_outputs():
    nodes = [helper.make_node("Split", ["x"], ["s1", "s2"], axis=0), helper.make_node("Neg", ["s1"], ["y1"]),
             helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Split", ["r"], ["y2", "y3"], axis=0)]
    shared = _check(_model(nodes, [("x", [2, 32])], ["y1", "y2", "y3", "s2"]), {"x": _x(2, 32)})
    assert shared == {}  # s2 is a graph output (so s1 cannot share alone), y2 and y3 too


def test_reshapes_share_their_inputs_bytes():
    shape = helper.make_tensor("shape", T.INT64, [2], [4, 16])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Reshape", ["r", "shape"], ["a"]),
             helper.make_node("Flatten", ["a"], ["b"], axis=0), helper.make_node("Squeeze", ["b"], ["c"]),
             helper.make_node("Neg", ["c"], ["y"]), helper.make_node("Flatten", ["x"], ["f"]),
             helper.make_node("Abs", ["f"], ["z"]), helper.make_node("Transpose", ["a"], ["t"]),
             helper.make_node("Neg", ["t"], ["w"])]
    shared = _check(_model(nodes, [("x", [1, 4, 4, 4])], ["y", "z", "w"], [shape]), {"x": _x(1, 4, 4, 4)})
    # (a Transpose moves elements: its output has bytes of its own)
    assert shared == {"a": ("r", 0), "b": ("r", 0), "c": ("r", 0), "f": ("x", 0)}


def _reshape_concat_split():
    shape = helper.make_tensor("shape", T.INT64, [3], [1, 2, 32])
    flat = helper.make_tensor("flat", T.INT64, [2], [4, 32])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Reshape", ["r", "shape"], ["a"]),
             helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Abs", ["x"], ["m"]),
             helper.make_node("Reshape", ["n", "shape"], ["b"]), helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
             helper.make_node("Concat", ["n", "m"], ["cc"], axis=1), helper.make_node("Reshape", ["c", "flat"], ["c2"]),
             helper.make_node("Split", ["c2"], ["s1", "s2"], axis=0), helper.make_node("Add", ["s1", "s2"], ["y"]),
             helper.make_node("Split", ["cc"], ["t1", "t2", "t3", "t4"], axis=1),
             helper.make_node("Mul", ["t3", "t4"], ["z"]), helper.make_node("Sub", ["t1", "t2"], ["w"])]
    return _model(nodes, [("x", [1, 4, 4, 4])], ["y", "z", "w"], [shape, flat]), {"x": _x(1, 4, 4, 4)}


# what the Reshape -> Concat -> Split model shares: a Concat of values already in
# another's bytes (a, b) copies; one of free values (n, m) gathers them
RESHAPE_CONCAT_SPLIT = {"a": ("r", 0), "b": ("cc", 0), "n": ("cc", 0), "m": ("cc", 256), "c2": ("c", 0),
                        "s1": ("c", 0), "s2": ("c", 256), "t1": ("cc", 0), "t2": ("cc", 128), "t3": ("cc", 256),
                        "t4": ("cc", 384)}


def test_reshape_concat_split():
    assert _check(*_reshape_concat_split()) == RESHAPE_CONCAT_SPLIT


WITHOUT = {  # each operator's declaration taken away: its values get bytes of their own
    Concat: {"a": ("r", 0), "b": ("n", 0), "c2": ("c", 0), "s1": ("c", 0), "s2": ("c", 256), "t1": ("cc", 0),
             "t2": ("cc", 128), "t3": ("cc", 256), "t4": ("cc", 384)},
    Split: {"a": ("r", 0), "b": ("cc", 0), "n": ("cc", 0), "m": ("cc", 256), "c2": ("c", 0)},
}


@pytest.mark.parametrize("op", [Concat, Split])
def test_the_plan_reads_the_operators_declaration(monkeypatch, op):
    """The planner knows what shares only from Op.aliases (the answers stay right without)."""
    monkeypatch.setattr(op, "aliases", ())
    assert _check(*_reshape_concat_split()) == WITHOUT[op]


def test_a_reshape_without_its_declaration_copies(monkeypatch):
    monkeypatch.setattr(Squeeze, "aliases", ())  # (Squeeze_13 inherits it)
    shape = helper.make_tensor("shape", T.INT64, [3], [1, 4, 16])
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Reshape", ["r", "shape"], ["a"]),
             helper.make_node("Squeeze", ["a"], ["c"]), helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("Neg", ["f"], ["y"])]
    shared = _check(_model(nodes, [("x", [1, 4, 4, 4])], ["y"], [shape]), {"x": _x(1, 4, 4, 4)})
    assert shared == {"a": ("r", 0), "f": ("c", 0)}


@pytest.mark.parametrize("mask", [False, True])
def test_dropout_in_inference_is_its_input(mask):
    """Dropout declares its output its input's bytes where the node asks for no mask
    (Dropout.node_aliases); kept unoptimized (the optimizer removes it)."""
    outputs = ["d", "mask"] if mask else ["d"]
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Dropout", ["r"], outputs),
             helper.make_node("Neg", ["d"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 8])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)]
                          + ([helper.make_tensor_value_info("mask", T.BOOL, None)] if mask else []))
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    shared = _check(model, {"x": _x(2, 8)}, optimize=False)
    assert shared == ({} if mask else {"d": ("r", 0)})


class _Halves(Op):
    """A view-like operator made up here: its two outputs are its input's halves along axis 0."""
    aliases = (Alias(AliasKind.SLICES, input=0),)

    def alias_axis(self, rank):
        return 0


class _View(Op):
    """Another: its output is its input's bytes."""
    aliases = (Alias(AliasKind.WHOLE, output=0, input=0),)


def _step(op_class, inputs, outputs, infos, views=None):
    op = op_class(helper.make_node("Made", inputs, outputs), 17)
    return SimpleNamespace(op=op, inputs=[infos[n] for n in inputs], outputs=[infos[n] for n in outputs],
                           launch=Launch("Made", views=views or {}))


def test_an_operator_declaring_aliases_is_planned_from_its_declaration_alone():
    f32 = np.dtype(np.float32)
    infos = {"x": Info(f32, (2, 16)), "lo": Info(f32, (1, 16)), "hi": Info(f32, (1, 16)),
             "v": Info(f32, (16,)), "w": Info(f32, (16,))}
    steps = [_step(_Halves, ["x"], ["lo", "hi"], infos), _step(_View, ["hi"], ["v"], infos),
             _step(_View, ["lo"], ["w"], infos, {0: View((16,), (1,))})]  # (read through a view: copied)
    assert _shared_bytes(steps, {"x": 1}, infos) == {"lo": ("x", 0), "hi": ("x", 64), "v": ("hi", 0)}


def test_loop_body_concat_of_carried_values():
    # the body's carried output is a Concat of slices of the carried input: each
    # iteration's pieces are written into the output the C loop swaps in next
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Split", ["v"], ["lo", "hi"], axis=1),
         helper.make_node("Neg", ["hi"], ["nhi"]), helper.make_node("Add", ["lo", "lo"], ["slo"]),
         helper.make_node("Concat", ["nhi", "slo"], ["v_out"], axis=1)],
        "body", [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond", T.BOOL, []),
                 helper.make_tensor_value_info("v", T.FLOAT, [1, 32])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("v_out", T.FLOAT, [1, 32])])
    trip = helper.make_tensor("trip", T.INT64, [], [5])
    go = helper.make_tensor("go", T.BOOL, [], [True])  # (onnx.reference does not iterate without it)
    nodes = [helper.make_node("Loop", ["trip", "go", "x"], ["y"], body=body)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [1, 32])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)], [trip, go])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    x = _x(1, 32)
    (got,) = ml.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(want, x)  # (it did iterate)
