"""SessionOptions.optimized_model_filepath: the optimized graph mlrt writes loads in
onnxruntime and in mlrt again and computes what the original model computes, with
the fusions onnxruntime does not know written in standard operators."""

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
import mlrt.lowlevel as ml

ort = pytest.importorskip("onnxruntime")
rng = np.random.default_rng(5)


def _conv_model(tail: str, opset: int = 17, residual: bool = False):
    """Conv (+ a residual Add) followed by an activation in the form exporters write."""
    w = (rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 10, 10])]
    v = "c"
    if residual:
        inputs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 8, 10, 10]))
        nodes.append(helper.make_node("Add", ["c", "r"], ["s"]))
        v = "s"
    if tail == "silu":
        nodes += [helper.make_node("Sigmoid", [v], ["g"]), helper.make_node("Mul", [v, "g"], ["y"])]
    elif tail == "hardswish":
        nodes.append(helper.make_node("HardSwish", [v], ["y"]))
    elif tail == "hardsigmoid_mul":
        nodes += [helper.make_node("HardSigmoid", [v], ["g"], alpha=0.25, beta=0.4),
                  helper.make_node("Mul", [v, "g"], ["y"])]
    elif tail == "relu":
        nodes.append(helper.make_node("Relu", [v], ["y"]))
    else:
        nodes.append(helper.make_node("Identity", [v], ["y"]))
    graph = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])],
                              inits)
    feeds = {"x": rng.standard_normal((1, 4, 10, 10)).astype(np.float32)}
    if residual:
        feeds["r"] = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), feeds


def _gelu_model(opset: int = 17):
    """x * 0.5 * (1 + Erf(x / sqrt 2)) as exporters write it: one Gelu node to mlrt."""
    consts = {"sqrt2": math.sqrt(2.0), "one": 1.0, "half": 0.5}
    inits = [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in consts.items()]
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    graph = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 16])], inits)
    return (helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]),
            {"x": rng.standard_normal((3, 16)).astype(np.float32)})


CASES = [("silu", lambda: _conv_model("silu")), ("hardswish", lambda: _conv_model("hardswish")),
         ("hardsigmoid_mul", lambda: _conv_model("hardsigmoid_mul")),
         ("residual_silu", lambda: _conv_model("silu", residual=True)),
         ("residual_only", lambda: _conv_model("identity", residual=True)),
         ("relu", lambda: _conv_model("relu")), ("gelu_opset17", lambda: _gelu_model(17))]


@pytest.mark.parametrize("name,build", CASES)
def test_optimized_model_runs_elsewhere(name, build, tmp_path):
    model, feeds = build()
    data = model.SerializeToString()
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    so = ml.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    mine = ml.InferenceSession(data, so).run(None, feeds)[0]
    saved = onnx.load(so.optimized_model_filepath)
    onnx.checker.check_model(saved)
    kinds = {(n.domain, n.op_type) for n in saved.graph.node}
    assert ("", "Gelu") not in kinds  # below opset 20 ONNX has none
    for n in saved.graph.node:
        if n.op_type == "FusedConv":
            act = next((a.s.decode() for a in n.attribute if a.name == "activation"), "")
            assert act in ("Relu", "Tanh", "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid"), act
    theirs = ort.InferenceSession(so.optimized_model_filepath, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    again = ml.InferenceSession(so.optimized_model_filepath).run(None, feeds)[0]
    for got in (mine, theirs, again):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def _ir3_model(declare_initializers: bool):
    """IR 3, opset 8: y = (x + b) * s, with b and s initializers, declared as graph inputs
    (as IR 3 asks) or not (as onnxruntime also accepts)."""
    b = numpy_helper.from_array(rng.standard_normal((2, 300)).astype(np.float32), "b")
    s = numpy_helper.from_array(np.array(1.5, np.float32), "s")
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 300])]
    if declare_initializers:
        inputs += [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 300]),
                   helper.make_tensor_value_info("s", TensorProto.FLOAT, [])]
    graph = helper.make_graph([helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Mul", ["a", "s"], ["y"])],
                              "ir3", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 300])], [b, s])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    return model, {"x": rng.standard_normal((2, 300)).astype(np.float32)}


def test_an_ir3_model_whose_initializers_are_not_inputs_loads_as_in_onnxruntime():
    model, feeds = _ir3_model(declare_initializers=False)
    with pytest.raises(onnx.checker.ValidationError, match="not in graph input"):
        onnx.checker.check_model(model)  # what onnx says; onnxruntime and mlrt run it
    data = model.SerializeToString()
    expected = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    sess = ml.InferenceSession(data)
    assert [a.name for a in sess.get_inputs()] == ["x"] and sess.get_overridable_initializers() == []
    np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=1e-6)


@pytest.mark.parametrize("declared", [True, False])
def test_an_optimized_ir3_model_declares_its_initializers(declared, tmp_path):
    """Folding makes initializers the model did not have (and drops some it had): the
    written model declares exactly the ones it has, as IR 3 asks."""
    model, feeds = _ir3_model(declared)
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    so = ml.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ml.InferenceSession(model.SerializeToString(), so)
    saved = onnx.load(so.optimized_model_filepath)
    onnx.checker.check_model(saved)
    assert saved.ir_version == 3
    assert [i.name for i in saved.graph.input][0] == "x"
    assert sorted(i.name for i in saved.graph.input[1:]) == sorted(t.name for t in saved.graph.initializer)
    for sess in (ort.InferenceSession(so.optimized_model_filepath, providers=["CPUExecutionProvider"]),
                 ml.InferenceSession(so.optimized_model_filepath)):
        assert [a.name for a in sess.get_inputs()] == ["x"]
        np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=1e-6)


def test_overridable_initializers_stay_declared_from_ir4(tmp_path):
    model, feeds = _conv_model("relu")
    model.graph.input.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [8]))  # b overridable
    so = ml.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ml.InferenceSession(model.SerializeToString(), so)
    saved = onnx.load(so.optimized_model_filepath)
    assert [i.name for i in saved.graph.input] == ["x", "b"]
    assert [a.name for a in ml.InferenceSession(so.optimized_model_filepath).get_overridable_initializers()] == ["b"]


def test_external_initializers_as_onnxruntime_configures_them(tmp_path):
    model, feeds = _conv_model("silu")
    expected = ml.InferenceSession(model.SerializeToString()).run(None, feeds)[0]
    so = ml.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name", "opt.weights")
    so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "100")
    (tmp_path / "opt.weights").write_bytes(b"stale" * 1000)  # replaced, not appended to
    ml.InferenceSession(model.SerializeToString(), so)
    saved = onnx.load(so.optimized_model_filepath, load_external_data=False)
    external = {t.name for t in saved.graph.initializer if t.data_location == TensorProto.EXTERNAL}
    assert external == {"w"}  # 8x4x3x3 floats; b (32 bytes) stays in
    assert (tmp_path / "opt.weights").stat().st_size == 8 * 4 * 3 * 3 * 4
    for sess in (ort.InferenceSession(so.optimized_model_filepath, providers=["CPUExecutionProvider"]),
                 ml.InferenceSession(so.optimized_model_filepath)):
        np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=1e-5, atol=1e-6)
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name", "../outside.bin")
    with pytest.raises(mlrt.InvalidArgument, match="beside the model"):
        ml.InferenceSession(model.SerializeToString(), so)
    so.add_session_config_entry("session.optimized_model_external_initializers_file_name", "opt.weights")
    so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "lots")
    with pytest.raises(mlrt.InvalidArgument, match="whole number"):
        ml.InferenceSession(model.SerializeToString(), so)
