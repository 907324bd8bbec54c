"""mlrt.lowlevel.InferenceSession: onnxruntime's API, clear errors, a session that
stays usable after bad input."""

import concurrent.futures

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml


def small_model(batch="N", opset=17, with_init=True) -> onnx.ModelProto:
    """y = relu(x + b) + x, with x: float[batch, 3] and b an initializer."""
    nodes = [helper.make_node("Add", ["x", "b"], ["t"], name="add"),
             helper.make_node("Relu", ["t"], ["u"], name="relu"),
             helper.make_node("Add", ["u", "x"], ["y"], name="add2")]
    inits = [helper.make_tensor("b", T.FLOAT, [3], [1.0, -5.0, 2.0])]
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, [batch, 3])]
    if with_init:
        inputs.append(helper.make_tensor_value_info("b", T.FLOAT, [3]))  # overridable
    g = helper.make_graph(nodes, "small", inputs, [helper.make_tensor_value_info("y", T.FLOAT, [batch, 3])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="mlrt-tests",
                          doc_string="a small test model", model_version=7)
    helper.set_model_props(m, {"author": "tests", "Image.BitmapPixelFormat": "Bgr8"})
    return m


def expected(x, b=np.array([1, -5, 2], np.float32)):
    return np.maximum(x + b, 0) + x


@pytest.fixture(scope="module")
def session():
    return ml.InferenceSession(small_model().SerializeToString())


def test_inputs_outputs_and_metadata(session):
    (x,) = session.get_inputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", ["N", 3])
    (b,) = session.get_overridable_initializers()
    assert b.name == "b" and b.shape == [3]
    (y,) = session.get_outputs()
    assert y.name == "y" and y.type == "tensor(float)"
    meta = session.get_modelmeta()
    assert meta.producer_name == "mlrt-tests" and meta.graph_name == "small"
    assert meta.description == "a small test model" and meta.version == 7
    assert meta.custom_metadata_map["Image.BitmapPixelFormat"] == "Bgr8"
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert "CPUExecutionProvider" in ml.get_available_providers()
    assert [a[1:] for a in session.get_node_assignment()] == [("Add", "CPUExecutionProvider"),
                                                              ("Relu", "CPUExecutionProvider"),
                                                              ("Add", "CPUExecutionProvider")]


@pytest.mark.parametrize("batch", [1, 2, 5, 0])
def test_run_many_shapes(session, batch):
    x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
    (y,) = session.run(None, {"x": x})
    np.testing.assert_allclose(y, expected(x), rtol=1e-6)
    (y2,) = session.run(["y"], {"x": x})
    np.testing.assert_array_equal(y, y2)


def test_override_initializer(session):
    x = np.ones((2, 3), np.float32)
    b = np.array([0, 0, 10], np.float32)
    (y,) = session.run(None, {"x": x, "b": b})
    np.testing.assert_allclose(y, expected(x, b))
    (y,) = session.run(None, {"x": x})  # back to the stored initializer
    np.testing.assert_allclose(y, expected(x))


@pytest.mark.parametrize("feed, message", [
    ({"z": np.ones((1, 3), np.float32)}, "'z' is not an input"),
    ({}, "input 'x' is missing"),
    ({"x": np.ones((1, 3), np.float64)}, "expected tensor(float)"),
    ({"x": np.ones((3,), np.float32)}, "expected rank 2"),
    ({"x": np.ones((1, 4), np.float32)}, "dimension 1 must be 3"),
])
def test_bad_input_is_named_and_session_survives(session, feed, message):
    with pytest.raises(mlrt.InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        session.run(None, feed)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected(x))


def test_bad_output_name(session):
    with pytest.raises(mlrt.InvalidArgument, match="'nope' is not an output"):
        session.run(["nope"], {"x": np.ones((1, 3), np.float32)})


def test_errors_subclass_mlrt_error():
    for cls in (mlrt.InvalidModel, mlrt.InvalidArgument, mlrt.NotImplemented, mlrt.RuntimeLoadError,
                mlrt.DeviceError, mlrt.ResourceExhausted):
        assert issubclass(cls, mlrt.MlrtError)


@pytest.mark.parametrize("source", [b"", b"\x08\x07garbage\xff\xff", b"not a model at all"])
def test_malformed_bytes(source):
    with pytest.raises(mlrt.InvalidModel):
        ml.InferenceSession(source)


def test_missing_file(tmp_path):
    with pytest.raises(mlrt.InvalidModel, match="does not exist"):
        ml.InferenceSession(str(tmp_path / "nope.onnx"))


def test_unsupported_operator_named():
    node = helper.make_node("NoSuchOp", ["x"], ["y"], domain="example.custom")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.custom", 1)])
    with pytest.raises(mlrt.NotImplemented, match="example.custom::NoSuchOp"):
        ml.InferenceSession(m.SerializeToString())


def test_dangling_input_is_invalid_model():
    node = helper.make_node("Relu", ["nowhere"], ["y"])
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(mlrt.InvalidModel):
        ml.InferenceSession(m.SerializeToString())


def test_load_from_path_and_model_proto(tmp_path):
    m = small_model()
    path = tmp_path / "small.onnx"
    onnx.save(m, path)
    x = np.ones((2, 3), np.float32)
    for source in (str(path), path, m):
        np.testing.assert_allclose(ml.InferenceSession(source).run(None, {"x": x})[0], expected(x))


def test_external_data_outside_folder_refused(tmp_path):
    m = small_model()
    t = m.graph.initializer[0]
    t.ClearField("float_data")
    t.data_location = onnx.TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", "../outside.bin"
    path = tmp_path / "ext.onnx"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(mlrt.InvalidModel, match="outside the model folder"):
        ml.InferenceSession(str(path))


def test_external_data_loaded(tmp_path):
    m = small_model()
    onnx.save(m, tmp_path / "ext.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(ml.InferenceSession(str(tmp_path / "ext.onnx")).run(None, {"x": x})[0], expected(x))


@pytest.mark.parametrize("level", list(ml.GraphOptimizationLevel))
def test_optimization_levels_and_threads(level):
    so = ml.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 3
    s = ml.InferenceSession(small_model().SerializeToString(), so)
    x = np.arange(300, dtype=np.float32).reshape(100, 3) - 150
    np.testing.assert_allclose(s.run(None, {"x": x})[0], expected(x))
    assert s.get_session_options().intra_op_num_threads == 3


def test_bad_options():
    so = ml.SessionOptions()
    with pytest.raises(mlrt.InvalidArgument):
        so.intra_op_num_threads = -1
    with pytest.raises(mlrt.InvalidArgument, match="provider name"):
        ml.InferenceSession(small_model().SerializeToString(), providers=[3])


@pytest.mark.parametrize("providers", [["CUDAExecutionProvider", "CPUExecutionProvider"], ["NoSuchExecutionProvider"],
                                       [("CUDAExecutionProvider", {"device_id": 0}), "CPUExecutionProvider"]])
def test_unavailable_providers_warn_and_fall_back(providers):
    """As onnxruntime: a provider this machine lacks is a warning, not an error; the
    session runs on the ones it has (the CPU at least)."""
    with pytest.warns(UserWarning, match="is not in available provider names"):
        s = ml.InferenceSession(small_model().SerializeToString(), providers=providers)
    assert s.get_providers() == ["CPUExecutionProvider"]
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(s.run(None, {"x": x})[0], expected(x))


def test_concurrent_runs_agree(session):
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((64, 3)).astype(np.float32) for _ in range(32)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda x: session.run(None, {"x": x})[0], xs))
    for x, y in zip(xs, results):
        np.testing.assert_allclose(y, expected(x), rtol=1e-6)


def test_optimized_model_written(tmp_path):
    so = ml.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ml.InferenceSession(small_model().SerializeToString(), so)
    onnx.checker.check_model(onnx.load(so.optimized_model_filepath))


def test_onnxruntime_style_script_runs_unchanged(monkeypatch):
    """A script written for onnxruntime runs with mlrt.lowlevel swapped in."""
    import sys
    monkeypatch.setitem(sys.modules, "onnxruntime", ml)
    import onnxruntime as ort  # this is mlrt.lowlevel now
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(small_model().SerializeToString(), so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(sess.run([sess.get_outputs()[0].name], {name: x})[0], expected(x))
    assert ort.get_device() == "CPU" and isinstance(ort.__version__, str)


def test_values_of_unknown_rank_and_untyped_outputs_are_accepted():
    """onnxruntime loads a model whose input and value infos are tensors without a shape
    (unknown rank) and whose output has no type: onnx's checker refuses it, mlrt does not."""
    def shapeless(name):
        v = onnx.ValueInfoProto()
        v.name = name
        v.type.tensor_type.elem_type = T.FLOAT
        return v

    out = onnx.ValueInfoProto()
    out.name = "y"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])],
                              "g", [shapeless("x")], [out], value_info=[shapeless("r")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(model)
    s = ml.InferenceSession(model.SerializeToString())
    assert s.get_inputs()[0].shape == []  # onnxruntime's NodeArg.shape of an unknown-rank tensor
    for x in (np.array([-1.0, 2.0], np.float32), np.ones((2, 3), np.float32), np.float32(-3.0)):
        np.testing.assert_array_equal(s.run(None, {"x": x})[0], -np.maximum(x, 0))
