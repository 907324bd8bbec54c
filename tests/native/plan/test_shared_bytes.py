"""Values a native plan keeps in another value's bytes (plan/native.py, _shared_bytes):
a Concat's inputs written straight into its slices, a Split's outputs read from its
input's slices, a Reshape's output in its input's bytes.  Each case checks which values
share (plan.shared: name -> (value holding it, byte offset)) and that the answers are
onnx.reference's exactly; the cases that must not share check that they do not."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import mlrt.lowlevel as ml


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info(n, T.FLOAT, None) for n in outputs], list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds):
    """Run on mlrt and onnx.reference (answers equal exactly); the plan's shared values."""
    data = model.SerializeToString()
    sess = ml.InferenceSession(data)
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
