"""Loop bodies iterated in C (native/plan/loop.py): the same results as onnxruntime,
whether the loop runs natively or falls back to Python iterations, and the native path
taken where it should be.  (onnx.reference concatenates scan outputs along their first
axis instead of stacking them on a new one, against the stored conformance outputs.)"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt.lowlevel as ml
from mlrt.native.plan import cpu as cpu_plan

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def loop_model(body_nodes, body_outputs, n_state=1, with_trip=True, with_cond=True, inits=(), outer=()):
    """Loop(M, cond, x0) over a body (i, cond_in, x_in) -> body_outputs; outer values
    `outer` ((name, array)) are graph inputs the body reads from the enclosing scope."""
    body = helper.make_graph(body_nodes, "body", [vi("i", I64, []), vi("cond_in", B, []), vi("x_in")][:2 + n_state],
                             [vi(n, B if k == 0 else F) for k, n in enumerate(body_outputs)],
                             initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    n_out = len(body_outputs) - 1
    node = helper.make_node("Loop", ["M" if with_trip else "", "cond" if with_cond else "", "x0"],
                            [f"out{k}" for k in range(n_out)], body=body)
    inputs = [vi("M", I64, []), vi("cond", B, []), vi("x0", F, [2, 3])] + [vi(n, F, list(v.shape)) for n, v in outer]
    g = helper.make_graph([node], "g", inputs, [vi(f"out{k}") for k in range(n_out)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def run_both(m, trip, x0, outer=()):
    feeds = {"M": np.array(trip, np.int64), "cond": np.array(True), "x0": x0, **dict(outer)}
    got = ml.InferenceSession(m.SerializeToString()).run(None, feeds)
    expected = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    return got


def _spy(monkeypatch, name):
    """Records, for each call of cpu_plan.<name>, whether the body iterated in C."""
    calls = []
    real = getattr(cpu_plan, name)

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append(result is not None)
        return result
    monkeypatch.setattr(cpu_plan, name, spy)
    return calls


@pytest.fixture
def native_calls(monkeypatch):
    """How many loops ran natively (run_native returned a result) in the test."""
    return _spy(monkeypatch, "run_native_loop")


@pytest.fixture
def native_scans(monkeypatch):
    return _spy(monkeypatch, "run_native_scan")


X0 = np.arange(6, dtype=np.float32).reshape(2, 3)
STEP = [helper.make_node("Add", ["x_in", "one"], ["x_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Mul", ["x_out", "half"], ["scan"])]
STEP_INITS = (("one", np.float32(1)), ("half", np.float32(0.5)))


@pytest.mark.parametrize("trip", [1, 2, 15, 16, 17, 100])
def test_carried_and_scan_outputs(trip, native_calls):
    """Trip counts around the first chunk of 16 iterations and past later chunks."""
    m = loop_model(STEP, ["cond_out", "x_out", "scan"], inits=STEP_INITS)
    out = run_both(m, trip, X0)
    assert out[1].shape == (trip, 2, 3)
    assert native_calls == [True]


def test_condition_stops_the_loop(native_calls):
    """No trip count: the body's condition (sum below a bound) ends it after 40 iterations."""
    nodes = [helper.make_node("Add", ["x_in", "one"], ["x_out"]), helper.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
             helper.make_node("Less", ["s", "bound"], ["cond_out"]), helper.make_node("Identity", ["x_out"], ["scan"])]
    m = loop_model(nodes, ["cond_out", "x_out", "scan"], with_trip=False,
                   inits=(("one", np.float32(1)), ("bound", np.float32(15 + 6 * 40))))
    out = run_both(m, 0, X0)
    assert out[1].shape == (40, 2, 3)
    assert native_calls == [True]


def test_iteration_number_and_outer_values(native_calls):
    """The body reads the iteration number and a value of the enclosing graph."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F), helper.make_node("Mul", ["fi", "w"], ["iw"]),
             helper.make_node("Add", ["x_in", "iw"], ["x_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    w = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    m = loop_model(nodes, ["cond_out", "x_out"], outer=(("w", w),))
    run_both(m, 7, X0, outer=(("w", w),))
    assert native_calls == [True]


def test_growing_value_iterates_in_python(native_calls):
    """A loop-carried value that changes shape cannot run natively; results stay right."""
    nodes = [helper.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0),
             helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    m = loop_model(nodes, ["cond_out", "x_out"])
    run_both(m, 3, X0)
    assert native_calls == [False]


def test_value_both_carried_and_scanned_iterates_in_python(native_calls):
    m = loop_model(STEP[:2], ["cond_out", "x_out", "x_out"], inits=STEP_INITS)
    run_both(m, 5, X0)
    assert native_calls == [False]


def test_loop_output_does_not_alias_the_input():
    """The initial value the caller passed is never written by the iterations."""
    m = loop_model(STEP, ["cond_out", "x_out", "scan"], inits=STEP_INITS)
    x0 = X0.copy()
    ml.InferenceSession(m.SerializeToString()).run(None, {"M": np.array(20, np.int64), "cond": np.array(True), "x0": x0})
    np.testing.assert_array_equal(x0, X0)


def test_profiling_iterates_in_python(native_calls, tmp_path):
    """With profiling on, every body node of every iteration is an event: Python iterates."""
    m = loop_model(STEP, ["cond_out", "x_out", "scan"], inits=STEP_INITS)
    so = ml.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "p")
    s = ml.InferenceSession(m.SerializeToString(), so)
    s.run(None, {"M": np.array(4, np.int64), "cond": np.array(True), "x0": X0})
    s.end_profiling()
    assert native_calls == [None] or native_calls == [False]


@pytest.mark.parametrize("in_axis, in_dir, out_axis, out_dir", [(0, 0, 0, 0), (1, 1, 1, 0), (1, 0, 0, 1), (2, 1, -1, 1)])
def test_scan_axes_and_directions(in_axis, in_dir, out_axis, out_dir, native_scans):
    """A running sum over the scan axis (state + slice), with its partial sums as the scan
    output, on every axis and direction Scan-9 offers."""
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                              helper.make_node("Mul", ["s_out", "two"], ["y_t"])], "body",
                             [vi("s_in"), vi("x_t")], [vi("s_out"), vi("y_t")],
                             initializer=[numpy_helper.from_array(np.float32(2), "two")])
    x = np.random.default_rng(1).standard_normal((5, 7, 3)).astype(np.float32)
    slice_shape = list(np.take(x, 0, axis=in_axis).shape)
    node = helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                            scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                            scan_output_axes=[out_axis], scan_output_directions=[out_dir])
    g = helper.make_graph([node], "g", [vi("s0", F, slice_shape), vi("x", F, list(x.shape))], [vi("s"), vi("ys")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    feeds = {"s0": np.zeros(slice_shape, np.float32), "x": x}
    got = ml.InferenceSession(m).run(None, feeds)
    expected = ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(got, expected):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert native_scans == [True]
