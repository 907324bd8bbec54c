"""Model loading: onnx's own C++ checks run in a helper process, so a model that makes
them abort costs that process, not the caller's."""

import os

import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
from mlrt.native import graph


def relu_model(name="g"):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], name,
                          [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def fresh_checker(monkeypatch):
    checker = graph._Checker()
    monkeypatch.setattr(graph, "_checker", checker)
    yield checker
    if checker.pid is not None:
        checker._stop()


def test_checker_abort_becomes_invalid_model(fresh_checker, monkeypatch):
    real = graph._check_and_infer

    def check_or_abort(model):  # runs in the child, forked after this patch
        if model.graph.name == "boom":
            os.abort()
        return real(model)

    monkeypatch.setattr(graph, "_check_and_infer", check_or_abort)
    with pytest.raises(mlrt.InvalidModel, match="crashed"):
        graph.load(relu_model("boom").SerializeToString())
    assert fresh_checker.pid is None  # the dead helper was reaped
    g = graph.load(relu_model().SerializeToString())  # a new helper takes the next model
    assert [n.op_type for n in g.nodes] == ["Relu"] and g.value_types["y"].shape == (2,)


def test_large_models_checked_in_their_own_child(fresh_checker, monkeypatch):
    monkeypatch.setattr(graph._Checker, "LARGE", 0)
    g = graph.load(relu_model().SerializeToString())
    assert fresh_checker.pid is None and g.value_types["y"].elem_type == T.FLOAT


def test_checker_errors_are_reported():
    bad = relu_model()
    bad.graph.node[0].attribute.append(helper.make_attribute("bogus", 3))
    with pytest.raises(mlrt.InvalidModel, match="ONNX checker: Unrecognized attribute: bogus"):
        graph.load(bad.SerializeToString())
