"""Model forms other exporters write that onnx's checker passes and onnxruntime runs:
model-local functions (torch.onnx.export(dynamo=True) writes modules as them, nested and
with attribute references) and sparse initializers (native/graph.py: expanded and made
dense at load).  Each runs on mlrt as on onnxruntime; what is malformed is refused
naming what and where."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt
import mlrt.lowlevel as ml

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle these models are held against")

X = np.array([1, 2, -4], np.float32)  # (sum < 0: the If takes its then branch; -X its else)
OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("pkg", 1)]


def _model(nodes, inputs, outputs, initializers=(), functions=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(g, opset_imports=OPSETS, functions=list(functions))
    m.ir_version = 8
    onnx.checker.check_model(m)  # (a form onnx's checker passes)
    return m


def _vi(name, shape=(3,)):
    return helper.make_tensor_value_info(name, T.FLOAT, list(shape))


ADD_RELU = helper.make_function("pkg", "AddRelu", ["a", "b"], ["c"],
                                [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["c"])],
                                [helper.make_opsetid("", 17)])


def _constant_from_attribute(output, attribute):
    node = helper.make_node("Constant", [], [output])
    node.attribute.append(helper.make_attribute_ref("value_float", onnx.AttributeProto.FLOAT,
                                                    ref_attr_name=attribute))
    return node


# a function calling another, with an attribute its caller sets (ref_attr_name)
SCALED = helper.make_function(
    "pkg", "Scaled", ["a", "b"], ["c"],
    [helper.make_node("AddRelu", ["a", "b"], ["r"], domain="pkg"),
     _constant_from_attribute("k", "scale"),
     helper.make_node("Mul", ["r", "k"], ["c"])],
    [helper.make_opsetid("", 17), helper.make_opsetid("pkg", 1)], attributes=["scale"])
W = numpy_helper.from_array(np.array([1, -5, 2], np.float32), "w")


def _then_else():
    then = helper.make_graph([helper.make_node("AddRelu", ["x", "w"], ["t"], domain="pkg")], "then", [], [_vi("t")])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [_vi("e")])
    return [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
            helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.float32))),
            helper.make_node("Less", ["total", "zero"], ["cond"]),
            helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)]


FUNCTION_MODELS = {
    "called twice": lambda: _model([helper.make_node("AddRelu", ["x", "w"], ["t"], domain="pkg"),
                                    helper.make_node("AddRelu", ["t", "x"], ["y"], domain="pkg")],
                                   [_vi("x")], [_vi("y")], [W], [ADD_RELU]),
    "nested, with an attribute reference": lambda: _model(
        [helper.make_node("Scaled", ["x", "w"], ["y"], domain="pkg", scale=2.5)], [_vi("x")], [_vi("y")], [W],
        [ADD_RELU, SCALED]),
    "called in an If branch": lambda: _model(_then_else(), [_vi("x")], [_vi("y")], [W], [ADD_RELU]),
}


@pytest.mark.parametrize("make", FUNCTION_MODELS.values(), ids=FUNCTION_MODELS.keys())
@pytest.mark.parametrize("x", [X, -X], ids=["x", "-x"])
def test_local_functions_run_as_on_onnxruntime(make, x):
    data = make().SerializeToString()
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for level in (ml.GraphOptimizationLevel.ORT_DISABLE_ALL, ml.GraphOptimizationLevel.ORT_ENABLE_ALL):
        options = ml.SessionOptions()
        options.graph_optimization_level = level
        np.testing.assert_allclose(ml.InferenceSession(data, options).run(None, {"x": x})[0], want, rtol=1e-6)


def test_a_model_with_functions_saves_what_both_load(tmp_path):
    options = ml.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ml.InferenceSession(FUNCTION_MODELS["nested, with an attribute reference"]().SerializeToString(), options)
    want = ml.InferenceSession(FUNCTION_MODELS["nested, with an attribute reference"]().SerializeToString()) \
        .run(None, {"x": X})[0]
    for rt in (ml, ort):
        got = rt.InferenceSession(options.optimized_model_filepath, providers=["CPUExecutionProvider"]) \
            .run(None, {"x": X})[0]
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _sparse_model(values, indices, dims, index_name="i"):
    sparse = helper.make_sparse_tensor(numpy_helper.from_array(np.asarray(values, np.float32), "w"),
                                       numpy_helper.from_array(np.asarray(indices, np.int64), index_name), dims)
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "g", [], [_vi("y", dims)])
    g.sparse_initializer.append(sparse)
    m = helper.make_model(g, opset_imports=OPSETS[:1])
    m.ir_version = 8
    return m.SerializeToString()


SPARSE = {"linear indices": ([5, 7], [0, 3], [2, 2]), "coordinates": ([5, 7, 1], [[0, 1], [1, 0], [2, 2]], [3, 3]),
          "none set": ([], np.zeros((0,), np.int64), [2, 3]), "a vector": ([2.5], [4], [6])}


@pytest.mark.parametrize("values,indices,dims", SPARSE.values(), ids=SPARSE.keys())
def test_sparse_initializers_made_dense(values, indices, dims):
    data = _sparse_model(values, indices, dims)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {})[0]
    got = ml.InferenceSession(data).run(None, {})[0]
    assert got.dtype == want.dtype and got.tolist() == want.tolist() and np.count_nonzero(got) == len(values)


@pytest.mark.parametrize("values,indices,dims,words", [
    ([5, 7], [0, 9], [2, 2], "an index is outside its dims"),
    ([5, 7], [[0, 1], [2, 0]], [2, 2], "an index is outside its dims"),
    ([5, 7], [0, 1, 2], [2, 2], "indices of shape \\[3\\] for 2 values"),
    ([5], [0], [1 << 20, 1 << 20], "would take more than"),
], ids=["linear past the end", "coordinate past the end", "indices and values disagree", "too large to make dense"])
def test_malformed_sparse_initializers_refused(values, indices, dims, words):
    with pytest.raises(mlrt.InvalidModel, match="sparse initializer 'w'.*" + words):
        ml.InferenceSession(_sparse_model(values, indices, dims))
