"""If branches (and Loop bodies) planned as any partition (native/plan/cpu.py): a
model wrapped in an If on a small integer input runs as one native plan holding the
chosen branch; a branch decided only at run time is a native plan of its own, keyed
by the shapes it reads and the content of the enclosing values its shapes come from.
Same answers as onnxruntime and as the model without the If, over calls that carry
state, at several batch sizes and chunk lengths."""

import json
import sys
import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt.lowlevel as ml
from mlrt.native.plan import cpu as cpu_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from models import silero_vad_like  # noqa: E402


def vi(name, elem=T.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def top_partition(sess):
    return sess._runnable.pieces[0].runnable


@pytest.fixture(scope="module")
def vad():
    wrapped, _ = silero_vad_like(True)
    flat, _ = silero_vad_like(False)
    return {"if": wrapped.SerializeToString(), "flat": flat.SerializeToString()}


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("samples", [512, 256])
def test_vad_in_an_if_equals_onnxruntime_and_the_flat_model(vad, batch, samples):
    mine, flat = ml.InferenceSession(vad["if"]), ml.InferenceSession(vad["flat"])
    oracle = ort.InferenceSession(vad["if"], providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(batch * samples)
    states = {k: np.zeros((2, batch, 128), np.float32) for k in ("mine", "flat", "ort")}
    for _ in range(5):  # consecutive chunks, the state carried from call to call
        x = (rng.standard_normal((batch, samples)) * 0.3).astype(np.float32)
        sr = np.array(16000, np.int64)
        y, states["mine"] = mine.run(None, {"input": x, "sr": sr, "state": states["mine"]})
        y_flat, states["flat"] = flat.run(None, {"input": x, "state": states["flat"]})
        y_ort, states["ort"] = oracle.run(None, {"input": x, "sr": sr, "state": states["ort"]})
        assert y.shape == y_ort.shape == (batch, 1)
        np.testing.assert_allclose(y, y_ort, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(states["mine"], states["ort"], rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(y, y_flat)
        np.testing.assert_array_equal(states["mine"], states["flat"])
    assert np.abs(states["mine"]).max() > 1e-3  # (the state does carry something)
    # the whole wrapped model is one native plan holding the 16 kHz branch, run by a QuickRun
    plans = top_partition(mine).plans.values()
    assert len(plans) == 1 and hasattr(plans[0], "handle")
    assert len(mine._quick_runs) == 1


def test_vad_both_sample_rates_alternating(vad):
    """sr changes from call to call: a plan for each rate, each the branch of that rate."""
    mine = ml.InferenceSession(vad["if"])
    oracle = ort.InferenceSession(vad["if"], providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    state_m = state_o = np.zeros((2, 1, 128), np.float32)
    for k in range(6):
        sr, n = (16000, 512) if k % 2 == 0 else (8000, 256)
        x = (rng.standard_normal((1, n)) * 0.3).astype(np.float32)
        feeds = {"input": x, "sr": np.array(sr, np.int64)}
        y, state_m = mine.run(None, dict(feeds, state=state_m))
        y_o, state_o = oracle.run(None, dict(feeds, state=state_o))
        np.testing.assert_allclose(y, y_o, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(state_m, state_o, rtol=1e-4, atol=1e-5)
    assert len(top_partition(mine).plans) == 2
    assert len(mine._quick_runs) == 2  # (each checks the content of sr before it runs)


def test_vad_from_many_threads(vad):
    """run() from several threads at once, each its own batch, rate and state."""
    sess = ml.InferenceSession(vad["if"])
    rng = np.random.default_rng(4)
    jobs = []
    for t in range(6):
        batch, (sr, n) = 1 + t % 2, ((16000, 512), (8000, 256), (16000, 256))[t % 3]
        chunks = [(rng.standard_normal((batch, n)) * 0.3).astype(np.float32) for _ in range(20)]
        jobs.append((batch, np.array(sr, np.int64), chunks))

    def serial(job):
        batch, sr, chunks = job
        state, outs = np.zeros((2, batch, 128), np.float32), []
        for x in chunks:
            y, state = sess.run(None, {"input": x, "sr": sr, "state": state})
            outs.append(y)
        return outs, state

    expected = [serial(job) for job in jobs]
    got = [None] * len(jobs)

    def work(k):
        got[k] = serial(jobs[k])
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for (eo, es), (go, gs) in zip(expected, got):
        np.testing.assert_array_equal(np.concatenate(go), np.concatenate(eo))
        np.testing.assert_array_equal(gs, es)


def _data_decided_if(branch_nodes, out):
    """y = If(ReduceMax(x) > 0): then = the given nodes reading `n` (x's batch size as a
    [1] tensor, computed before the If) and x; else = x.  The condition is data, so the
    If runs on the host, its branch a plan of its own."""
    then = helper.make_graph(branch_nodes, "then", [], [vi(out)])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e")])
    nodes = [helper.make_node("Shape", ["x"], ["sh"]), helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
             helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
             helper.make_node("Greater", ["mx", "fzero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    inits = [helper.make_tensor("zero", T.INT64, [1], [0]), helper.make_tensor("fzero", T.FLOAT, [], [0.0]),
             helper.make_tensor("minus1", T.INT64, [1], [-1])]
    return model(nodes, [vi("x", T.FLOAT, ["b", 6])], [vi("y")], inits)


def test_a_branch_decided_at_run_time_is_a_native_plan():
    """The branch reshapes by a batch size read before the If: planned by that content."""
    m = _data_decided_if([helper.make_node("Concat", ["n", "minus1"], ["shape"], axis=0),
                          helper.make_node("Reshape", ["x", "shape"], ["r"]),
                          helper.make_node("Relu", ["r"], ["t"])], "t")
    sess = ml.InferenceSession(m)
    oracle = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    for b, sign in ((2, 1), (3, 1), (2, -1), (2, 1)):
        x = np.arange(6 * b, dtype=np.float32).reshape(b, 6) * sign
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], oracle.run(None, {"x": x})[0])
    part = top_partition(sess)
    (branch,) = [sub for sub in part._subprograms.values() if sub.graph.nodes[0].op_type == "Concat"]
    assert branch._by_value == {"n", "minus1"}  # (an initializer of the enclosing graph is fed to it too)
    assert len(branch.plans) == 2 and all(hasattr(p, "handle") for p in branch.plans.values())


def test_enclosing_values_that_change_every_run_stop_planning_by_content():
    """A branch whose shapes come from an input that differs at every run: after
    MAX_VALUE_PLANS contents it runs as a graph whose shapes depend on data does."""
    then = helper.make_graph([helper.make_node("Slice", ["x", "zero", "k"], ["s"])], "then", [], [vi("s")])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e")])
    nodes = [helper.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
             helper.make_node("Greater", ["mx", "fzero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x", T.FLOAT, [20]), vi("k", T.INT64, [1])], [vi("y")],
              [helper.make_tensor("zero", T.INT64, [1], [0]), helper.make_tensor("fzero", T.FLOAT, [], [0.0])])
    sess = ml.InferenceSession(m)
    x = np.arange(20, dtype=np.float32) + 1
    for k in range(1, 15):
        np.testing.assert_array_equal(sess.run(None, {"x": x, "k": np.array([k], np.int64)})[0], x[:k])
    (branch,) = [sub for sub in top_partition(sess)._subprograms.values() if sub.graph.nodes[0].op_type == "Slice"]
    assert branch._by_value == frozenset() and len(branch._value_keys) == cpu_plan.MAX_VALUE_PLANS


def test_if_on_a_fed_condition_is_one_plan_per_value():
    """An If whose condition is a graph input: the plan holds the branch of that value,
    and a QuickRun made for one value never runs the other's."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [vi("t")])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e")])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
              [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3])], [vi("y")], [helper.make_tensor("two", T.FLOAT, [], [2.0])])
    sess = ml.InferenceSession(m)
    x = np.array([1, -2, 3], np.float32)
    for k in range(8):
        c = k % 3 == 0
        np.testing.assert_array_equal(sess.run(None, {"c": np.array(c), "x": x})[0], x * 2 if c else -x)
    assert len(top_partition(sess).plans) == 2 and len(sess._quick_runs) == 2


def test_loop_body_reading_an_enclosing_shape_iterates_in_c(monkeypatch):
    """A Loop body reshapes by a size computed before the Loop: it is planned by that
    content and iterated in C."""
    calls = []
    real = cpu_plan.run_native_loop
    monkeypatch.setattr(cpu_plan, "run_native_loop", lambda *a: calls.append(real(*a)) or calls[-1])
    body = helper.make_graph(
        [helper.make_node("Reshape", ["x_in", "shape"], ["r"]), helper.make_node("Add", ["r", "r"], ["d"]),
         helper.make_node("Reshape", ["d", "orig"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("x_in")], [vi("cond_out", T.BOOL), vi("x_out")])
    nodes = [helper.make_node("Shape", ["x"], ["orig"]), helper.make_node("ReduceProd", ["orig"], ["size"], keepdims=1),
             helper.make_node("Concat", ["size", "one"], ["shape"], axis=0),
             helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)]
    m = model(nodes, [vi("M", T.INT64, []), vi("x", T.FLOAT, ["a", "b"])], [vi("y")],
              [helper.make_tensor("one", T.INT64, [1], [1])])
    sess = ml.InferenceSession(m)
    oracle = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    for shape in ((2, 3), (4, 1)):
        feeds = {"M": np.array(5, np.int64), "x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape)}
        np.testing.assert_array_equal(sess.run(None, feeds)[0], oracle.run(None, feeds)[0])
    assert len(calls) == 2 and all(c is not None for c in calls)


def _nested(inner_on: str) -> bytes:
    """y = If(sr > 8000) { If(<inner_on> == 16000 or 1) { Relu(x) } else { Neg(x) } } else { Abs(x) }"""
    def leaf(tag, op):
        return helper.make_graph([helper.make_node(op, ["x"], [f"l_{tag}"])], tag, [], [vi(f"l_{tag}")])
    inner = helper.make_graph([helper.make_node("Equal", [inner_on, "k16" if inner_on == "sr" else "one"], ["ci"]),
                               helper.make_node("If", ["ci"], ["o_in"], then_branch=leaf("a", "Relu"),
                                                else_branch=leaf("b", "Neg"))], "inner", [], [vi("o_in")])
    return model([helper.make_node("Greater", ["sr", "limit"], ["c"]),
                  helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=leaf("c", "Abs"))],
                 [vi("sr", T.INT64, []), vi("mode", T.INT64, [1]), vi("x", T.FLOAT, ["n"])], [vi("y")],
                 [helper.make_tensor("one", T.INT64, [1], [1]), helper.make_tensor("limit", T.INT64, [], [8000]),
                  helper.make_tensor("k16", T.INT64, [], [16000])])


@pytest.mark.parametrize("inner_on", ["sr", "mode"])
def test_nested_ifs(inner_on, tmp_path):
    """If in an If.  Both on `sr`: one plan per rate holds the one branch that runs (and
    profiling names its nodes, no If).  The inner one on `mode`, an input only the
    branch reads: the outer If runs on the host and its branch's plan holds the inner
    branch (mode is an enclosing value there, planned by content)."""
    m = _nested(inner_on)
    sess = ml.InferenceSession(m)
    oracle = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    x = np.array([-1.5, 0, 2.5], np.float32)
    for sr, mode in ((16000, 1), (12000, 0), (16000, 0), (8000, 1), (16000, 1)):
        feeds = {"sr": np.array(sr, np.int64), "mode": np.array([mode], np.int64), "x": x}
        np.testing.assert_array_equal(sess.run(None, feeds)[0], oracle.run(None, feeds)[0])
    top = top_partition(sess)
    if inner_on == "sr":
        plans = top.plans.values()
        assert len(plans) == 3 and all(hasattr(p, "handle") for p in plans)
        so = ml.SessionOptions()
        so.enable_profiling = True
        so.profile_file_prefix = str(tmp_path / "nested")
        profiled = ml.InferenceSession(m, so)
        profiled.run(None, {"sr": np.array(16000, np.int64), "mode": np.array([1], np.int64), "x": x})
        events = json.loads(Path(profiled.end_profiling()).read_text())
        ops_run = {e["args"]["op_name"] for e in events if e.get("cat") == "Node"}
        assert "Relu" in ops_run and "Neg" not in ops_run and "If" not in ops_run
    else:
        (branch,) = [sub for sub in top._subprograms.values() if sub.graph.nodes[0].op_type == "Equal"]
        assert "mode" in branch._by_value
        assert len(branch.plans) == 2 and all(hasattr(p, "handle") for p in branch.plans.values())


def test_a_branch_value_named_as_an_enclosing_one():
    """A branch's own initializer has the name of one of the enclosing graph (it shadows
    it there): planned in under another name, each reader sees its own."""
    c = lambda v: helper.make_tensor("c", T.FLOAT, [], [v])  # noqa: E731
    then = helper.make_graph([helper.make_node("Mul", ["x", "c"], ["t"])], "then", [], [vi("t")], [c(3.0)])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e")])
    m = model([helper.make_node("If", ["on"], ["y"], then_branch=then, else_branch=other),
               helper.make_node("Mul", ["y", "c"], ["z"])],
              [vi("on", T.BOOL, []), vi("x", T.FLOAT, [2])], [vi("z")], [c(2.0)])
    sess = ml.InferenceSession(m)
    x = np.array([1, -2], np.float32)
    for on in (True, False, True):
        np.testing.assert_array_equal(sess.run(None, {"on": np.array(on), "x": x})[0], x * 6 if on else -x * 2)
    assert all(hasattr(p, "handle") for p in top_partition(sess).plans.values())
