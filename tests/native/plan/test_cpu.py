"""Executor paths: static plans vs node-by-node, plan caching per signature, and
Launch.extra (constant tables an operator hands its kernel)."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt.lowlevel as ml
from mlrt.native import ops
from mlrt.native.ops import Info, Launch, Op


class _PlusRamp(Op):
    """Test-only op: y = x + arange(x.size).reshape(x.shape), the ramp passed as Launch.extra."""

    domain = "mlrt.test"
    kernel = "Add"

    def infer(self, inputs):
        x = self.need(inputs, 0)
        return [Info(x.dtype, x.shape)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        return Launch("Add", extra=[np.arange(x.size, dtype=x.dtype).reshape(x.shape)])


@pytest.fixture
def plus_ramp(monkeypatch):
    table = dict(ops.registry())
    table[("mlrt.test", "PlusRamp")] = [(1, _PlusRamp)]
    monkeypatch.setattr(ops, "registry", lambda: table)
    _PlusRamp.domain = "mlrt.test"


def model(nodes, inputs, outputs, opsets=(("", 17), ("mlrt.test", 1))):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets]).SerializeToString()


def test_launch_extra_static_and_eager(plus_ramp, monkeypatch):
    from mlrt.native import _lib
    monkeypatch.setattr(_lib, "find_kernel", lambda d, op, opset, dt, _f=_lib.find_kernel: _f("", op, 17, dt))
    nodes = [helper.make_node("PlusRamp", ["x"], ["t"], domain="mlrt.test"), helper.make_node("Relu", ["t"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", T.FLOAT, ["n", 3])],
              [helper.make_tensor_value_info("y", T.FLOAT, None)])
    sess = ml.InferenceSession(m)
    for n in (1, 4):
        x = -np.ones((n, 3), np.float32) * 2
        (y,) = sess.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x + np.arange(3 * n).reshape(n, 3), 0))
        eager = sess._runnable.pieces[0].runnable._run_eager({"x": x})["y"]
        np.testing.assert_array_equal(eager, y)


def test_data_dependent_shape_runs_node_by_node():
    """Reshape's target shape is a graph input: no static plan, same answers."""
    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"]), helper.make_node("Relu", ["r"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", T.FLOAT, [2, 6]), helper.make_tensor_value_info("s", T.INT64, [2])],
              [helper.make_tensor_value_info("y", T.FLOAT, None)], opsets=(("", 17),))
    sess = ml.InferenceSession(m)
    x = np.arange(12, dtype=np.float32).reshape(2, 6) - 6
    for shape in ([3, 4], [4, 3], [-1, 2]):
        (y,) = sess.run(None, {"x": x, "s": np.array(shape, np.int64)})
        np.testing.assert_array_equal(y, np.maximum(x.reshape(shape), 0))


def test_shape_chain_is_folded_into_a_static_plan():
    """Shape -> Gather -> Concat -> Reshape on a free batch dim plans statically, once per shape."""
    i64 = lambda name, v: helper.make_tensor(name, T.INT64, [len(v)], v)  # noqa: E731
    nodes = [helper.make_node("Shape", ["x"], ["sh"]),
             helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
             helper.make_node("Concat", ["n", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, ["b", 2, 3])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)],
                          [i64("zero", [0]), i64("minus1", [-1])])
    sess = ml.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    for b in (1, 3, 1):
        x = np.random.default_rng(b).standard_normal((b, 2, 3)).astype(np.float32)
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x.reshape(b, 6))
    plans = sess._runnable.pieces[0].runnable.plans
    assert len(plans) == 2 and all(p is not None and hasattr(p, "handle") for p in plans.values())


def test_unseeded_random_differs_between_runs():
    """Random ops are never computed ahead of time (no constant folding, no plan-time values)."""
    nodes = [helper.make_node("RandomUniform", [], ["r"], shape=[64]), helper.make_node("Relu", ["r"], ["y"])]
    m = model(nodes, [], [helper.make_tensor_value_info("y", T.FLOAT, [64])], opsets=(("", 17),))
    sess = ml.InferenceSession(m)
    a, b = sess.run(None, {})[0], sess.run(None, {})[0]
    assert a.shape == (64,) and (a != b).any()
    assert ((a >= 0) & (a < 1)).all()


def test_nodes_before_host_ops_still_run_as_a_native_plan():
    """Relu -> Add feed a SequenceConstruct (a host op): the Relu/Add prefix is planned natively."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["a"]),
             helper.make_node("SequenceConstruct", ["a", "r"], ["seq"]),
             helper.make_node("SequenceAt", ["seq", "zero"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None),
                           helper.make_tensor_value_info("r", T.FLOAT, None)],
                          [helper.make_tensor("zero", T.INT64, [], [0])])
    sess = ml.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    y, r = sess.run(None, {"x": x})
    np.testing.assert_array_equal(r, np.maximum(x, 0))
    np.testing.assert_array_equal(y, np.maximum(x, 0) + x)
    prefix = sess._runnable.pieces[0].runnable._prefix
    assert [op.op_type for op in prefix.ops] == ["Relu", "Add"]
    assert any(hasattr(p, "handle") for p in prefix.plans.values())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_inputs_without_a_half_kernel_run_in_float(dtype):
    """MatMul has no float16 kernel: it runs on float32 copies and rounds back once."""
    import ml_dtypes

    t = np.dtype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype)
    elem = helper.np_dtype_to_tensor_dtype(t)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"]), helper.make_node("Softmax", ["m"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("a", elem, [3, 8]), helper.make_tensor_value_info("b", elem, [8, 4])],
              [helper.make_tensor_value_info("y", elem, None)], opsets=(("", 17),))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 8)).astype(t), rng.standard_normal((8, 4)).astype(t)
    (y,) = ml.InferenceSession(m).run(None, {"a": a, "b": b})
    assert y.dtype == t
    logits = a.astype(np.float32) @ b.astype(np.float32)
    expected = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(y.astype(np.float32), expected / expected.sum(1, keepdims=True), rtol=2e-2, atol=2e-2)
