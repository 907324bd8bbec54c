"""SessionOptions.optimized_model_filepath: the optimized graph mlrt writes loads in
onnxruntime and in mlrt again and computes what the original model computes, with
the fusions onnxruntime does not know written in standard operators."""

import math
import os

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


def _dynamic_conv_model(act: str):
    """quantize_dynamic's chain for one Conv: DynamicQuantizeLinear, ConvInteger, Cast, Mul
    by the scales' product, Add of the bias, then Clip or Relu: one ConvIntegerToFloat to mlrt."""
    inits = {"w": rng.integers(-127, 127, (8, 4, 3, 3)).astype(np.int8),
             "ws": (rng.random((8, 1, 1)) * 0.02 + 0.001).astype(np.float32),
             "wz": np.array(0, np.int8), "b": rng.standard_normal((1, 8, 1, 1)).astype(np.float32),
             "lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("Mul", ["xs", "ws"], ["s"]),
             helper.make_node("ConvInteger", ["xq", "w", "xz", "wz"], ["acc"], pads=[1, 1, 1, 1]),
             helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["accf", "s"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Clip", ["a", "lo", "hi"], ["y"]) if act == "clip" else helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "dq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 10, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return (helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
            {"x": rng.standard_normal((1, 4, 10, 10)).astype(np.float32)})


def _stem_model(act: str, opset: int = 17):
    """A network's first conv (3 channels, 3 x 3 / 2, to 64 x 111 x 112: 3.2 MB), an
    activation, then a 3 x 3 / 2 MaxPool (ceil_mode from opset 10): one FusedConvMaxPool
    to mlrt."""
    inits = [numpy_helper.from_array((rng.standard_normal((64, 3, 3, 3)) * 0.3).astype(np.float32), "w")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2])]
    if act == "silu":
        nodes += [helper.make_node("Sigmoid", ["c"], ["g"]), helper.make_node("Mul", ["c", "g"], ["a"])]
    else:
        nodes.append(helper.make_node("Relu", ["c"], ["a"]))
    nodes.append(helper.make_node("MaxPool", ["a"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1],
                                  **({"ceil_mode": 1} if opset >= 10 else {})))
    graph = helper.make_graph(nodes, "stem", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 226])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56 if opset >= 10 else 55, 56])],
                              inits)
    return (helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]),
            {"x": rng.standard_normal((1, 3, 224, 226)).astype(np.float32)})


CASES = [("silu", lambda: _conv_model("silu")), ("hardswish", lambda: _conv_model("hardswish")),
         ("hardsigmoid_mul", lambda: _conv_model("hardsigmoid_mul")),
         ("residual_silu", lambda: _conv_model("silu", residual=True)),
         ("residual_only", lambda: _conv_model("identity", residual=True)),
         ("relu", lambda: _conv_model("relu")), ("gelu_opset17", lambda: _gelu_model(17)),
         ("dynamic_conv_clip", lambda: _dynamic_conv_model("clip")),
         ("dynamic_conv_relu", lambda: _dynamic_conv_model("relu")),
         ("stem_maxpool", lambda: _stem_model("relu")), ("stem_silu_maxpool", lambda: _stem_model("silu")),
         ("stem_maxpool_opset8", lambda: _stem_model("relu", 8))]


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
    assert ("com.microsoft", "ConvIntegerToFloat") not in kinds  # (mlrt's own)
    assert ("com.microsoft", "FusedConvMaxPool") not in kinds
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


# -- external initializers: what onnxruntime 1.32 writes, checked against it ----------------------------
FILE = "session.optimized_model_external_initializers_file_name"
MIN_SIZE = "session.optimized_model_external_initializers_min_size_in_bytes"


def _bytes_model(sizes: dict, subgraph: dict | None = None):
    """One uint8 initializer per name of `sizes` (that many bytes), each summed into an
    output; `subgraph` (name -> size) puts more in the then-branch of an If on input c."""
    nodes, outputs, inits = [], [], []
    for name, n in sizes.items():
        inits.append(numpy_helper.from_array((np.arange(n) % 251).astype(np.uint8), name))
        nodes += [helper.make_node("Cast", [name], [f"{name}_f"], to=TensorProto.FLOAT),
                  helper.make_node("ReduceSum", [f"{name}_f"], [f"{name}_sum"], keepdims=0)]
        outputs.append(helper.make_tensor_value_info(f"{name}_sum", TensorProto.FLOAT, []))
    inputs = []
    if subgraph:
        (name, n), = subgraph.items()
        held = numpy_helper.from_array(np.full(n // 4, 2.0, np.float32), name)
        then = helper.make_graph([helper.make_node("ReduceSum", [name], ["t"], keepdims=0)], "then", [],
                                 [helper.make_tensor_value_info("t", TensorProto.FLOAT, [])], [held])
        other = helper.make_graph([helper.make_node("Identity", [outputs[0].name], ["e"])], "else", [],
                                  [helper.make_tensor_value_info("e", TensorProto.FLOAT, [])])
        nodes.append(helper.make_node("If", ["c"], ["sub_sum"], then_branch=then, else_branch=other))
        inputs.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
        outputs.append(helper.make_tensor_value_info("sub_sum", TensorProto.FLOAT, []))
    graph = helper.make_graph(nodes, "bytes", inputs, outputs, inits)
    feeds = {"c": np.array(True)} if subgraph else {}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), feeds


def _save_both(tmp_path, model, config: dict, name: str = "opt.onnx", level: int = 0):
    """Save `model` optimized (level 0: as it is) by onnxruntime into tmp_path/"ort" and
    by mlrt into tmp_path/"mlrt"; the two model paths, or the exceptions raised."""
    results = []
    for runtime, folder in ((ort, tmp_path / "ort"), (ml, tmp_path / "mlrt")):
        (folder / "sub").mkdir(parents=True, exist_ok=True)
        so = runtime.SessionOptions()
        so.graph_optimization_level = runtime.GraphOptimizationLevel(level)
        so.optimized_model_filepath = str(folder / name)
        for k, v in config.items():
            so.add_session_config_entry(k, v)
        try:
            runtime.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
            results.append(so.optimized_model_filepath)
        except Exception as exc:  # noqa: BLE001 - compared below
            results.append(exc)
    return results


def _layout(path) -> dict:
    """initializer name -> its external data entries ({} where it is in the model)."""
    saved = onnx.load(path, load_external_data=False)
    tensors = list(saved.graph.initializer)
    for n in saved.graph.node:
        for a in n.attribute:
            for g in [a.g] if a.HasField("g") else []:
                tensors += list(g.initializer)
    return {t.name: {e.key: e.value for e in t.external_data} for t in tensors}


def _runs_alike(paths, feeds, expected) -> None:
    for path in paths:
        for sess in (ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]), ml.InferenceSession(str(path))):
            for got, want in zip(sess.run(None, feeds), expected):
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)  # (conv: summation order)


@pytest.mark.parametrize("min_size,external", [
    (None, {"k1"}),                            # default 1024: a 1000-byte tensor stays in
    ("256", {"k1", "b256", "b1000"}),          # ">=": 256 goes, 255 stays
    ("255", {"k1", "b256", "b255", "b1000"}),
    ("0", {"k1", "b256", "b255", "b64", "b1000"}),
])
def test_the_size_threshold_is_at_least_as_onnxruntime_reads_it(tmp_path, min_size, external):
    sizes = {"k1": 1024, "b64": 64, "b255": 255, "b256": 256, "b1000": 1000}
    model, feeds = _bytes_model(sizes)
    config = {FILE: "w.bin"} | ({MIN_SIZE: min_size} if min_size is not None else {})
    theirs, mine = _save_both(tmp_path, model, config)
    assert {n for n, e in _layout(theirs).items() if e} == external
    assert _layout(mine) == _layout(theirs)  # same file, offsets and lengths
    assert (tmp_path / "mlrt" / "w.bin").read_bytes() == (tmp_path / "ort" / "w.bin").read_bytes()
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    _runs_alike([theirs, mine], feeds, expected)


def test_large_tensors_are_aligned_and_subgraph_initializers_go_too(tmp_path):
    """onnxruntime starts tensors of 1 MiB or more at a multiple of 4096 bytes, and writes
    the initializers of subgraphs (before those of the graph holding them)."""
    model, feeds = _bytes_model({"small": 10, "big": 1 << 20, "after": 3000}, subgraph={"held": 4000})
    theirs, mine = _save_both(tmp_path, model, {FILE: "w.bin", MIN_SIZE: "1"})
    layout = _layout(theirs)
    assert layout["big"]["offset"] == "4096" and layout["held"]["offset"] == "0"
    assert _layout(mine) == layout
    assert (tmp_path / "mlrt" / "w.bin").read_bytes() == (tmp_path / "ort" / "w.bin").read_bytes()
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    _runs_alike([theirs, mine], feeds, expected)


@pytest.mark.parametrize("config", [{}, {MIN_SIZE: "10"}, {MIN_SIZE: "lots"}, {FILE: "", MIN_SIZE: "10"}],
                         ids=["none", "size_only", "bad_size_only", "empty_name"])
def test_without_a_file_name_the_weights_stay_in_the_model(tmp_path, config):
    """The threshold is not even read without a file name, by either."""
    model, feeds = _bytes_model({"k2": 2048})
    theirs, mine = _save_both(tmp_path, model, config)
    assert _layout(theirs) == _layout(mine) == {"k2": {}}
    assert sorted(os.listdir(tmp_path / "mlrt")) == ["opt.onnx", "sub"]


@pytest.mark.parametrize("text", ["lots", "-1", " 10", "10 ", "+10", "1e3", "²"])
def test_a_threshold_that_is_no_whole_number_is_refused(tmp_path, text):
    model, _ = _bytes_model({"k2": 2048})
    theirs, mine = _save_both(tmp_path, model, {FILE: "w.bin", MIN_SIZE: text})
    if text != "²":  # (onnxruntime reads the digits of the classic locale only: ASCII)
        assert isinstance(theirs, Exception) and "parse" in str(theirs)
    assert isinstance(mine, mlrt.InvalidArgument) and "whole number" in str(mine)


def test_a_data_file_in_a_subfolder(tmp_path):
    model, feeds = _bytes_model({"k2": 2048, "k3": 4096})
    theirs, mine = _save_both(tmp_path, model, {FILE: "sub/w.bin"})
    assert _layout(mine) == _layout(theirs) and _layout(mine)["k2"]["location"] == "sub/w.bin"
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    _runs_alike([theirs, mine], feeds, expected)
    theirs, mine = _save_both(tmp_path, model, {FILE: "nofolder/w.bin"}, name="opt2.onnx")
    assert isinstance(theirs, Exception) and "open" in str(theirs)
    assert isinstance(mine, mlrt.InvalidArgument) and "no folder" in str(mine)
    assert not (tmp_path / "mlrt" / "opt2.onnx").exists()  # (onnxruntime leaves an empty model file)


def test_a_data_file_outside_the_model_folder_is_refused(tmp_path):
    """onnxruntime writes "../w.bin" and then cannot load what it wrote (its loader keeps
    external data inside the model's folder, as mlrt's does); it fails on an absolute
    path.  mlrt refuses both before writing anything."""
    model, _ = _bytes_model({"k2": 2048})
    theirs, mine = _save_both(tmp_path, model, {FILE: "../w.bin"}, name="sub/opt.onnx")
    assert (tmp_path / "ort" / "w.bin").exists()
    with pytest.raises(Exception, match="escapes model directory"):
        ort.InferenceSession(theirs, providers=["CPUExecutionProvider"])
    assert isinstance(mine, mlrt.InvalidArgument) and "beside the model" in str(mine)
    assert not (tmp_path / "mlrt" / "w.bin").exists() and not (tmp_path / "mlrt" / "sub" / "opt.onnx").exists()
    theirs, mine = _save_both(tmp_path, model, {FILE: str(tmp_path / "abs.bin")})
    assert isinstance(theirs, Exception) and "is_relative" in str(theirs)
    assert isinstance(mine, mlrt.InvalidArgument) and "beside the model" in str(mine)
    assert not (tmp_path / "abs.bin").exists()


def test_a_data_file_named_as_the_model_is_refused(tmp_path):
    """onnxruntime writes the weights and then the model over them (a file neither loads)."""
    model, _ = _bytes_model({"k2": 2048})
    theirs, mine = _save_both(tmp_path, model, {FILE: "opt.onnx"})
    with pytest.raises(Exception):
        onnx.load(theirs)
    assert isinstance(mine, mlrt.InvalidArgument)


def test_an_old_data_file_is_removed_when_nothing_goes_there(tmp_path):
    model, _ = _bytes_model({"k2": 2048})
    for folder in ("ort", "mlrt"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "w.bin").write_bytes(b"stale")
    _save_both(tmp_path, model, {FILE: "w.bin", MIN_SIZE: "100000"})
    assert not (tmp_path / "ort" / "w.bin").exists() and not (tmp_path / "mlrt" / "w.bin").exists()


def _model_with_external_data(folder):
    """The conv model saved in `folder` as m.onnx with every weight in weights.bin."""
    model, feeds = _conv_model("relu")
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(folder / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    expected = ort.InferenceSession(str(folder / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)
    return folder / "m.onnx", feeds, expected


def _save_from(source, target, config: dict, runtime, level: int = 0):
    so = runtime.SessionOptions()
    so.graph_optimization_level = runtime.GraphOptimizationLevel(level)
    so.optimized_model_filepath = str(target)
    for k, v in config.items():
        so.add_session_config_entry(k, v)
    runtime.InferenceSession(str(source), so, providers=["CPUExecutionProvider"])
    return target


def test_a_model_with_external_data_saved_elsewhere_without_a_file_name(tmp_path):
    """onnxruntime keeps the references as they were, now relative to the new model's
    folder, where the data is not; mlrt writes the weights into the saved model."""
    source, feeds, expected = _model_with_external_data(tmp_path / "src")
    (tmp_path / "out").mkdir()
    theirs = _save_from(source, tmp_path / "out" / "ort.onnx", {}, ort)
    assert _layout(theirs)["w"]["location"] == "weights.bin"
    with pytest.raises(Exception, match="does not exist"):
        ort.InferenceSession(str(theirs), providers=["CPUExecutionProvider"])
    mine = _save_from(source, tmp_path / "out" / "mlrt.onnx", {}, ml)
    assert all(not e for e in _layout(mine).values()) and sorted(os.listdir(tmp_path / "out")) == ["mlrt.onnx", "ort.onnx"]
    _runs_alike([mine], feeds, expected)


def test_a_model_with_external_data_saved_with_a_file_name(tmp_path):
    """Both write every weight anew, by the threshold, into the named file."""
    source, feeds, expected = _model_with_external_data(tmp_path / "src")
    (tmp_path / "out").mkdir()
    theirs = _save_from(source, tmp_path / "out" / "ort.onnx", {FILE: "ort.bin", MIN_SIZE: "100"}, ort)
    mine = _save_from(source, tmp_path / "out" / "mlrt.onnx", {FILE: "mlrt.bin", MIN_SIZE: "100"}, ml)
    for path, data in ((theirs, "ort.bin"), (mine, "mlrt.bin")):
        layout = _layout(path)
        assert layout["w"] == {"location": data, "offset": "0", "length": "1152"} and not layout["b"]  # (b: 32 bytes)
    optimized = _save_from(source, tmp_path / "out" / "all.onnx", {FILE: "all.bin", MIN_SIZE: "100"}, ml, level=99)
    again = _save_from(source, tmp_path / "src" / "opt.onnx", {FILE: "opt.bin"}, ml, level=99)  # beside the source
    _runs_alike([theirs, mine, optimized, again, source], feeds, expected)


def test_the_source_models_data_file_is_never_written_over(tmp_path):
    """onnxruntime writes over the data file of the model it is reading: unoptimized it
    empties it and fails, optimized it puts the optimized weights there and the source
    model no longer computes what it did.  mlrt refuses, and the model stays as it was."""
    source, feeds, expected = _model_with_external_data(tmp_path / "theirs")
    with pytest.raises(Exception, match="out of bounds"):
        _save_from(source, tmp_path / "theirs" / "opt.onnx", {FILE: "weights.bin"}, ort)
    assert (tmp_path / "theirs" / "weights.bin").stat().st_size == 0
    source, feeds, expected = _model_with_external_data(tmp_path / "theirs_optimized")
    _save_from(source, tmp_path / "theirs_optimized" / "opt.onnx", {FILE: "weights.bin"}, ort, level=99)
    got = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert not np.allclose(got, expected[0])
    source, feeds, expected = _model_with_external_data(tmp_path / "mine")
    before = (tmp_path / "mine" / "weights.bin").read_bytes()
    for name, level in (("weights.bin", 0), ("./weights.bin", 99), ("m.onnx", 99)):
        with pytest.raises(mlrt.InvalidArgument, match="was read from"):
            _save_from(source, tmp_path / "mine" / "opt.onnx", {FILE: name}, ml, level)
    assert (tmp_path / "mine" / "weights.bin").read_bytes() == before
    _runs_alike([source], feeds, expected)
