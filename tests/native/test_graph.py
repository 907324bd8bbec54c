"""Model loading: onnx's own C++ checks run in a helper process, so a model that makes
them abort costs that process, not the caller's."""

import os

import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
from mlrt.native import checker, load as loading


def relu_model(name="g"):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], name,
                          [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx", 17)])


@pytest.fixture
def fresh_checker(monkeypatch):
    fresh = checker._Checker()
    monkeypatch.setattr(checker, "_checker", fresh)
    yield fresh
    if fresh.pid is not None:
        fresh._stop()


def test_checker_abort_becomes_invalid_model(fresh_checker, monkeypatch):
    real = checker.check_and_infer

    def check_or_abort(model, *data):  # runs in the child, forked after this patch
        if model.graph.name == "boom":
            os.abort()
        return real(model, *data)

    monkeypatch.setattr(checker, "check_and_infer", check_or_abort)
    with pytest.raises(mlrt.InvalidModel, match="crashed"):
        loading.load(relu_model("boom").SerializeToString())
    assert fresh_checker.pid is None  # the dead helper was reaped
    g = loading.load(relu_model().SerializeToString())  # a new helper takes the next model
    assert [n.op_type for n in g.nodes] == ["Relu"] and g.value_types["y"].shape == (2,)


def test_large_models_checked_in_their_own_child(fresh_checker, monkeypatch):
    monkeypatch.setattr(checker._Checker, "LARGE", 0)
    g = loading.load(relu_model().SerializeToString())
    assert fresh_checker.pid is None and g.value_types["y"].elem_type == T.FLOAT


def test_checker_errors_are_reported():
    bad = relu_model()
    bad.graph.node[0].attribute.append(helper.make_attribute("bogus", 3))
    with pytest.raises(mlrt.InvalidModel, match="ONNX checker: Unrecognized attribute: bogus"):
        loading.load(bad.SerializeToString())


def test_default_domain_is_spelled_one_way_at_load():
    """ONNX lets a node name the default domain "ai.onnx" or ""; loading makes it "",
    subgraphs included, so nothing downstream (optimizer, partitioner, providers) has
    to know both spellings -- and the model still runs."""
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], domain="ai.onnx")], "then", [],
                             [helper.make_tensor_value_info("t", T.FLOAT, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], domain="ai.onnx")], "else", [],
                              [helper.make_tensor_value_info("e", T.FLOAT, [2])])
    nodes = [helper.make_node("Relu", ["x"], ["r"], domain="ai.onnx"),
             helper.make_node("ReduceSum", ["r"], ["s"], keepdims=0, domain="ai.onnx"),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, domain="ai.onnx")]
    model = helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2])],
        [helper.make_tensor_value_info("y", T.FLOAT, [2])],
        [helper.make_tensor("zero", T.FLOAT, [], [0.0])]), opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx", 17)])
    g = loading.load(model.SerializeToString())
    assert {n.domain for n in g.nodes} == {""}
    if_node = [n for n in g.nodes if n.op_type == "If"][0]
    assert {n.domain for a in if_node.attribute for n in a.g.node} == {""}
    import numpy as np

    import mlrt.lowlevel as ml
    sess = ml.InferenceSession(model.SerializeToString())
    np.testing.assert_array_equal(sess.run(None, {"x": np.array([1, -2], np.float32)})[0], [-1, 2])
    np.testing.assert_array_equal(sess.run(None, {"x": np.array([-1, -2], np.float32)})[0], [-1, -2])
