"""InferenceSession.run's quick path: after a run, the feeds of that signature (names,
dtypes, shapes) go straight to the partition's native plan (native/plan/native.py
QuickRun), with no feed checks.  Whatever it skips must still hold: other feeds take
the full path, with its errors and conversions; outputs are fresh arrays; threads
share it; a graph that does not run as one plan never takes it."""

import threading

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt.lowlevel as ml
from mlrt import InvalidArgument


def two_outputs(batch="n"):
    """y = x @ w + b and z = relu(y), with a free batch dimension."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"]),
             helper.make_node("Relu", ["y"], ["z"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [batch, 4])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [batch, 3]),
                           helper.make_tensor_value_info("z", T.FLOAT, [batch, 3])], [w, b])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString(), numpy_helper.to_array(w), numpy_helper.to_array(b)


def expected(x, w, b):
    y = x @ w + b
    return [y, np.maximum(y, 0)]


def test_quick_run_gives_what_the_full_path_gives():
    data, w, b = two_outputs()
    s = ml.InferenceSession(data)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    first = s.run(None, {"x": x})
    assert len(s._quick_runs) == 1  # kept for this signature
    again = s.run(None, {"x": x})
    for got, want in zip(again, expected(x, w, b)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert all(a is not f for a, f in zip(again, first))  # fresh arrays on every run
    np.testing.assert_array_equal(s.run(["z"], {"x": x})[0], again[1])
    np.testing.assert_array_equal(s.run(["z", "y"], {"x": x})[1], again[0])


def test_other_feeds_take_the_full_path():
    data, w, b = two_outputs()
    s = ml.InferenceSession(data)
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    s.run(None, {"x": x})
    with pytest.raises(InvalidArgument, match="float"):
        s.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(InvalidArgument, match="missing"):
        s.run(None, {})
    with pytest.raises(InvalidArgument, match="not an input"):
        s.run(None, {"x": x, "extra": x})
    with pytest.raises(InvalidArgument, match="not an output"):
        s.run(["nope"], {"x": x})
    with pytest.raises(InvalidArgument, match="rank"):
        s.run(None, {"x": x[0]})
    strided = np.asfortranarray(x)  # same dtype and shape, another layout
    np.testing.assert_allclose(s.run(None, {"x": strided})[0], expected(x, w, b)[0], rtol=1e-6, atol=1e-6)
    wrapped = s.run(None, {"x": ml.OrtValue.ortvalue_from_numpy(x)})  # unwrapped by the full path
    np.testing.assert_allclose(wrapped[1], expected(x, w, b)[1], rtol=1e-6, atol=1e-6)
    assert len(s._quick_runs) == 1  # neither made a second one for the same signature
    np.testing.assert_allclose(s.run(None, {"x": x})[1], expected(x, w, b)[1], rtol=1e-6, atol=1e-6)


def test_signatures_kept_are_few_and_recent():
    data, w, b = two_outputs()
    s = ml.InferenceSession(data)
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 4, 5, 6, 2):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        for _ in range(2):
            np.testing.assert_allclose(s.run(None, {"x": x})[0], x @ w + b, rtol=1e-5, atol=1e-5)
    # six signatures, then the second again: the four met last, most recent first
    kept = [next(n for n in range(1, 7) if q.fits({"x": np.zeros((n, 4), np.float32)})) for q in s._quick_runs]
    assert kept == [2, 6, 5, 4]


def test_threads_share_a_quick_run():
    data, w, b = two_outputs()
    s = ml.InferenceSession(data)
    xs = [np.random.default_rng(k).standard_normal((5, 4)).astype(np.float32) for k in range(4)]
    s.run(None, {"x": xs[0]})
    wrong = []

    def work(x):
        want = expected(x, w, b)
        for _ in range(300):
            got = s.run(None, {"x": x})
            if not all(np.allclose(g, e, rtol=1e-5, atol=1e-5) for g, e in zip(got, want)):
                wrong.append(got)

    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_a_graph_that_runs_otherwise_stops_asking():
    """An If whose branches are constants: its plan (one per condition) computes nothing
    and hands back constants, so there is no QuickRun, and after a few runs the session
    stops looking for one."""
    branch = lambda v: helper.make_graph(  # noqa: E731
        [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([v], np.float32)))],
        "b", [], [helper.make_tensor_value_info("c", T.FLOAT, [1])])
    g = helper.make_graph([helper.make_node("If", ["cond"], ["y"], then_branch=branch(1.0), else_branch=branch(2.0))],
                          "g", [helper.make_tensor_value_info("cond", T.BOOL, [])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1])])
    s = ml.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    for k in range(12):
        assert s.run(None, {"cond": np.array(k % 2 == 0)})[0][0] == (1.0 if k % 2 == 0 else 2.0)
    assert s._quick_runs == ()
    assert s._quick_failures == 8


def test_an_output_that_is_an_input_is_a_copy():
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"])], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info("r", T.FLOAT, [2]), helper.make_tensor_value_info("x", T.FLOAT, [2])])
    s = ml.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    x = np.array([-1.0, 2.0], np.float32)
    for _ in range(3):
        r, back = s.run(None, {"x": x})
        back[0] = 99.0
        assert x[0] == -1.0
        np.testing.assert_array_equal(r, [0.0, 2.0])


def test_run_options_and_profiling_still_count():
    data, w, b = two_outputs()
    s = ml.InferenceSession(data)
    x = np.ones((2, 4), np.float32)
    s.run(None, {"x": x})
    ro = ml.RunOptions()
    ro.terminate = True
    with pytest.raises(Exception, match="terminate"):
        s.run(None, {"x": x}, ro)
    so = ml.SessionOptions()
    so.enable_profiling = True
    p = ml.InferenceSession(data, so)
    for _ in range(3):
        p.run(None, {"x": x})
    assert p._quick_runs == ()  # every run of a profiled session is recorded
    import json
    import os
    path = p.end_profiling()
    try:
        events = json.load(open(path))
        assert sum(1 for e in events if e.get("cat") == "Node" and e["args"]["op_name"] == "Relu") == 3
    finally:
        os.remove(path)
