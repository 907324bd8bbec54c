"""The rest of onnxruntime 1.2x's instance API that apps call: set_providers and the
fallback switch, run_with_ort_values, the profiling start time, SessionOptions'
initializers and stored switches, run config entries, OrtValue's accessors, and
string tensors fed as numpy str/bytes arrays -- each checked against onnxruntime."""

import time

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import mlrt
import mlrt.lowlevel as ml
from mlrt.native.providers import _base as providers_base

CPU = ["CPUExecutionProvider"]


def _model(nodes, inputs, outputs, inits=(), ml_opset=False) -> bytes:
    opsets = [h.make_opsetid("", 17)] + ([h.make_opsetid("ai.onnx.ml", 3)] if ml_opset else [])
    graph = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(graph, opset_imports=opsets).SerializeToString()


def add_model(listed=True) -> bytes:
    """y = relu(x + b), b an initializer (listed as an input: overridable)."""
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["N", 3])]
    if listed:
        inputs.append(h.make_tensor_value_info("b", T.FLOAT, [3]))
    return _model([h.make_node("Add", ["x", "b"], ["t"]), h.make_node("Relu", ["t"], ["y"])], inputs,
                  [h.make_tensor_value_info("y", T.FLOAT, ["N", 3])], [h.make_tensor("b", T.FLOAT, [3], [1, -5, 2])])


def both(model, so_ml=None, so_ort=None):
    return ml.InferenceSession(model, so_ml), ort.InferenceSession(model, so_ort, providers=CPU)


X = np.array([[1, 2, 3], [-4, 5, -6]], np.float32)


@pytest.mark.parametrize("ort_obj, ml_obj, names", [
    (ort.InferenceSession, ml.InferenceSession, ["set_providers", "disable_fallback", "enable_fallback",
     "get_profiling_start_time_ns", "run_with_ort_values", "run_with_ortvaluevector", "get_session_options",
     "get_provider_options", "create_ortvalue_from_shape_and_type"]),
    (ort.SessionOptions(), ml.SessionOptions(), ["add_initializer", "add_external_initializers",
     "use_deterministic_compute", "use_per_session_threads", "execution_order", "enable_mem_reuse"]),
    (ort.RunOptions(), ml.RunOptions(), ["add_run_config_entry", "get_run_config_entry"]),
    (ort.OrtValue, ml.OrtValue, ["data_ptr", "tensor_size_in_bytes", "element_type",
     "ortvalue_from_numpy_with_onnx_type", "ortvalue_from_shape_and_type", "has_value", "is_tensor",
     "is_sparse_tensor", "is_tensor_sequence", "as_sparse_tensor", "from_dlpack", "__dlpack__", "__array__"]),
    (ort.IOBinding, ml.IOBinding, ["get_outputs_as_ortvaluevector", "copy_outputs_to_cpu", "synchronize_inputs",
     "synchronize_outputs"]),
])
def test_names_exist_where_onnxruntime_has_them(ort_obj, ml_obj, names):
    for name in names:
        if not hasattr(ort_obj, name):
            pytest.skip(f"onnxruntime {ort.__version__} has no {name}")
        assert hasattr(ml_obj, name), name


# -- providers and fallback ------------------------------------------------------------------------
class Box:
    """The flaky provider's 'device memory'."""

    def __init__(self, a):
        self.a = np.asarray(a)
        self.dtype, self.shape = self.a.dtype, self.a.shape


class FlakyReluProvider(providers_base.ExecutionProvider):
    """Runs Relu on its own 'device'; fails where `fail` says ("compile" or "run")."""
    name = "FlakyReluExecutionProvider"
    device = "flaky"
    fail = None

    def supports(self, node, graph):
        return node.op_type == "Relu"

    def compile(self, graph):
        if type(self).fail == "compile":
            raise mlrt.DeviceError("flaky: the program does not build")
        cls = type(self)

        class Runnable:
            def run(self, feeds):
                if cls.fail == "run":
                    raise mlrt.DeviceError("flaky: the device is lost")
                (n,) = graph.nodes
                return {n.output[0]: Box(np.maximum(feeds[n.input[0]].a, 0))}
        return Runnable()

    def to_device(self, array):
        return Box(array)

    def to_host(self, value):
        return value.a

    def owns(self, value):
        return isinstance(value, Box)


@pytest.fixture
def flaky():
    providers_base.register(FlakyReluProvider)
    FlakyReluProvider.fail = None
    yield FlakyReluProvider
    providers_base.unregister(FlakyReluProvider.name)


def test_set_providers_places_the_model_again(flaky):
    sess, ref = both(add_model())
    expected = ref.run(None, {"x": X})[0]
    sess.set_providers([flaky.name, "CPUExecutionProvider"], [{"a": "1"}, {}])
    assert sess.get_providers() == [flaky.name, "CPUExecutionProvider"]
    assert sess.get_provider_options()[flaky.name] == {"a": "1"}
    assert ("Relu", flaky.name) in [a[1:] for a in sess.get_node_assignment()]
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], expected)
    with pytest.raises(mlrt.InvalidArgument, match="provider name"):
        sess.set_providers([None])
    assert sess.get_providers() == [flaky.name, "CPUExecutionProvider"]  # left as it was, and usable
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], expected)
    with pytest.warns(UserWarning, match="NopeExecutionProvider"):  # as onnxruntime: on the providers there are
        sess.set_providers(["NopeExecutionProvider"])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], expected)
    sess.set_providers(CPU)
    ref.set_providers(CPU)
    assert sess.get_providers() == ref.get_providers() and sess.get_provider_options() == ref.get_provider_options()
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], expected)


def test_fallback_switch_at_run_time(flaky):
    sess = ml.InferenceSession(add_model(), providers=[flaky.name])
    flaky.fail = "run"
    sess.disable_fallback()
    with pytest.raises(mlrt.DeviceError, match="device is lost"):
        sess.run(None, {"x": X})
    sess.enable_fallback()
    with pytest.warns(RuntimeWarning, match="falls back"):
        (y,) = sess.run(None, {"x": X})
    np.testing.assert_array_equal(y, np.maximum(X + [1, -5, 2], 0))


def test_fallback_switch_at_creation(flaky):
    flaky.fail = "compile"
    with pytest.warns(RuntimeWarning, match="falls back"), \
            pytest.raises(mlrt.DeviceError, match="fallback is disabled"):
        ml.InferenceSession(add_model(), providers=[flaky.name], enable_fallback=0)
    sess = ml.InferenceSession(add_model())
    sess.disable_fallback()
    with pytest.warns(RuntimeWarning), pytest.raises(mlrt.DeviceError):
        sess.set_providers([flaky.name])
    assert sess.get_providers() == CPU
    with pytest.warns(RuntimeWarning, match="falls back"):
        ml.InferenceSession(add_model(), providers=[flaky.name])  # fallback on by default


# -- running on OrtValues; profiling ---------------------------------------------------------------
def test_run_with_ort_values_matches_onnxruntime():
    sess, ref = both(add_model())
    got = sess.run_with_ort_values(["y"], {"x": ml.OrtValue.ortvalue_from_numpy(X)})
    want = ref.run_with_ort_values(["y"], {"x": ort.OrtValue.ortvalue_from_numpy(X)})
    assert all(isinstance(v, ml.OrtValue) for v in got) and len(got) == len(want)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    assert got[0].data_type() == want[0].data_type() and got[0].shape() == want[0].shape()
    assert len(sess.run_with_ort_values(None, {"x": ml.OrtValue.ortvalue_from_numpy(X)})) == 1
    with pytest.raises(mlrt.InvalidArgument, match="'x' is missing"):
        sess.run_with_ort_values(["y"], {})
    fetches = []
    sess.run_with_ortvaluevector(ml.RunOptions(), ["x"], [ml.OrtValue.ortvalue_from_numpy(X)], ["y"], fetches, None)
    np.testing.assert_array_equal(fetches[0].numpy(), want[0].numpy())


def test_profiling_start_time_is_on_the_wall_clock(tmp_path):
    sos = []
    for module in (ml, ort):
        so = module.SessionOptions()
        so.enable_profiling = True
        so.profile_file_prefix = str(tmp_path / module.__name__)
        sos.append(so)
    before = time.time_ns()
    sess, ref = both(add_model(), *sos)
    started, ref_started = sess.get_profiling_start_time_ns(), ref.get_profiling_start_time_ns()
    assert abs(started - ref_started) < 60e9 and before - 1e9 < started <= time.time_ns()
    sess.end_profiling(), ref.end_profiling()
    assert sess.get_profiling_start_time_ns() == started and ref.get_profiling_start_time_ns() == ref_started
    plain, ref_plain = both(add_model())
    assert plain.get_profiling_start_time_ns() == ref_plain.get_profiling_start_time_ns() == 0


# -- options -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("listed", [True, False])
def test_add_initializer_matches_onnxruntime(listed):
    b = np.array([10, 20, -30], np.float32)
    so, so_ref = ml.SessionOptions(), ort.SessionOptions()
    so.add_initializer("b", ml.OrtValue.ortvalue_from_numpy(b))
    held = ort.OrtValue.ortvalue_from_numpy(b)  # (onnxruntime crashes if the OrtValue goes before the session is made)
    so_ref.add_initializer("b", held)
    b[0] = 11  # both hold the array, not a copy
    sess, ref = both(add_model(listed), so, so_ref)
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], ref.run(None, {"x": X})[0])
    assert sess.run(None, {"x": X})[0][0, 0] == 12
    assert [a.name for a in sess.get_overridable_initializers()] == [a.name for a in ref.get_overridable_initializers()]


@pytest.mark.parametrize("name, value, message", [
    ("zz", np.zeros(3, np.float32), "'zz' is not an initializer of the model"),
    ("x", np.zeros((1, 3), np.float32), "'x' is a graph input"),
    ("b", np.zeros(3, np.float64), r"float32\[3\] in the model, the value given is float64\[3\]"),
    ("b", np.zeros((1, 3), np.float32), r"the value given is float32\[1, 3\]"),
])
def test_add_initializer_is_checked_at_session_creation(name, value, message):
    so = ml.SessionOptions()
    so.add_initializer(name, value)  # (onnxruntime ignores an unknown name and takes a wrong type unchecked)
    with pytest.raises(mlrt.InvalidArgument, match=message):
        ml.InferenceSession(add_model(), so)


def test_add_external_initializers():
    so = ml.SessionOptions()
    so.add_external_initializers(["b"], [ml.OrtValue.ortvalue_from_numpy(np.zeros(3, np.float32))])
    np.testing.assert_array_equal(ml.InferenceSession(add_model(), so).run(None, {"x": X})[0], np.maximum(X, 0))
    with pytest.raises(mlrt.InvalidArgument, match="2 name"):
        so.add_external_initializers(["b", "c"], [np.zeros(3, np.float32)])
    with pytest.raises(mlrt.InvalidArgument, match="OrtValue or a numpy array"):
        so.add_initializer("b", [1.0, 2.0, 3.0])


def test_stored_session_switches_default_as_onnxruntime():
    so, ref = ml.SessionOptions(), ort.SessionOptions()
    for name in ("use_deterministic_compute", "use_per_session_threads", "enable_mem_reuse", "execution_order"):
        assert int(getattr(so, name)) == int(getattr(ref, name)), name
    so.use_deterministic_compute = True
    so.use_per_session_threads = False
    sess = ml.InferenceSession(add_model(), so)
    assert sess.get_session_options().use_deterministic_compute is True
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], np.maximum(X + [1, -5, 2], 0))


def test_run_config_entries():
    ro, ref = ml.RunOptions(), ort.RunOptions()
    for o in (ro, ref):
        o.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == \
        ref.get_run_config_entry("memory.enable_memory_arena_shrinkage")
    with pytest.raises(mlrt.InvalidArgument, match="'nope' is not set"):
        ro.get_run_config_entry("nope")
    with pytest.raises(RuntimeError):
        ref.get_run_config_entry("nope")
    assert ml.InferenceSession(add_model()).run(None, {"x": X}, ro)[0].shape == (2, 3)
    with pytest.raises(mlrt.InvalidArgument, match="expected a LoraAdapter"):  # (LoRA: test_lora.py)
        ro.add_active_adapter(object())


# -- OrtValue and IOBinding ------------------------------------------------------------------------
@pytest.mark.parametrize("array", [np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(5, dtype=np.int64),
                                   np.array([True, False]), np.zeros((0, 4), np.float16), np.float64(2.5)])
def test_ortvalue_accessors_match_onnxruntime(array):
    array = np.asarray(array)
    v, r = ml.OrtValue.ortvalue_from_numpy(array), ort.OrtValue.ortvalue_from_numpy(array)
    for name in ("element_type", "tensor_size_in_bytes", "data_ptr", "has_value", "is_tensor", "is_sparse_tensor",
                 "is_tensor_sequence", "data_type", "shape"):
        assert getattr(v, name)() == getattr(r, name)(), name
    np.testing.assert_array_equal(np.asarray(v), np.asarray(r))
    np.testing.assert_array_equal(np.from_dlpack(v), array)
    np.testing.assert_array_equal(ml.OrtValue.from_dlpack(array).numpy(), array)
    with pytest.raises(mlrt.InvalidArgument, match="from_dlpack"):
        ml.OrtValue.from_dlpack([1, 2])
    with pytest.raises(mlrt.InvalidArgument, match="does not contain SparseTensor"):  # (a dense value)
        v.as_sparse_tensor()


@pytest.mark.parametrize("array, onnx_type", [(np.array([1, 2], np.int32), T.FLOAT),
                                              (np.array([[16256, 16384]], np.uint16), T.BFLOAT16),
                                              (np.array([56, 64], np.uint8), T.FLOAT8E4M3FN)])
def test_ortvalue_with_onnx_type_matches_onnxruntime(array, onnx_type):
    v = ml.OrtValue.ortvalue_from_numpy_with_onnx_type(array, onnx_type)
    r = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array, onnx_type)
    for name in ("element_type", "data_type", "shape", "tensor_size_in_bytes", "data_ptr"):
        assert getattr(v, name)() == getattr(r, name)(), name
    assert v.numpy().view(array.dtype).tolist() == array.tolist()  # the same bits, read as the ONNX type
    z, rz = (m.OrtValue.ortvalue_from_shape_and_type([2, 3], onnx_type) for m in (ml, ort))
    for name in ("data_type", "shape", "tensor_size_in_bytes"):
        assert getattr(z, name)() == getattr(rz, name)(), name


def test_ortvalue_with_onnx_type_refuses_other_sizes():
    with pytest.raises(mlrt.InvalidArgument, match="4 byte"):
        ml.OrtValue.ortvalue_from_numpy_with_onnx_type(np.array([1, 2], np.int32), T.INT64)
    with pytest.raises(mlrt.InvalidArgument, match="not an ONNX element type"):
        ml.OrtValue.ortvalue_from_numpy_with_onnx_type(np.array([1, 2], np.int32), 999)


def test_device_value_has_no_data_ptr(flaky):
    v = ml.OrtValue.ortvalue_from_numpy(X, "flaky")
    assert v.device_name() == "flaky" and v.tensor_size_in_bytes() == X.nbytes
    with pytest.raises(mlrt.NotImplemented, match="opaque"):
        v.data_ptr()


def test_iobinding_outputs_as_vector():
    sess, ref = both(add_model())
    vectors = []
    for s, m in ((sess, ml), (ref, ort)):
        io = s.io_binding()
        io.bind_cpu_input("x", X)
        io.bind_output("y")
        io.synchronize_inputs()
        s.run_with_iobinding(io)
        io.synchronize_outputs()
        vectors.append((io.get_outputs_as_ortvaluevector(), io.copy_outputs_to_cpu()))
    (got, got_cpu), (want, want_cpu) = vectors
    assert len(got) == len(want) == 1 and isinstance(got[0], ml.OrtValue)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    np.testing.assert_array_equal(got_cpu[0], want_cpu[0])


# -- string tensors from numpy str / bytes arrays --------------------------------------------------
def string_identity(rank=1) -> bytes:
    return _model([h.make_node("Identity", ["s"], ["t"])], [h.make_tensor_value_info("s", T.STRING, [None] * rank)],
                  [h.make_tensor_value_info("t", T.STRING, [None] * rank)])


def as_ort_reads(feed):
    """onnxruntime reads a bytes ('S') array's items as C strings, so an item as long as
    the dtype runs into the next; its UTF-8 decoding, which is what it means, is given
    it instead."""
    return np.char.decode(feed, "utf-8") if isinstance(feed, np.ndarray) and feed.dtype.kind == "S" else feed


@pytest.mark.parametrize("feed", [np.array(["abc", "héllo!"]), np.array([b"dog", "cé".encode(), b"a"]),
                                  np.array(["x", "y"], dtype=object), np.array([["a", "bb"], ["ccc", ""]]),
                                  np.array("one"), np.array([], dtype="<U1"), ["p", "q"]])
def test_string_inputs_as_onnxruntime_takes_them(feed):
    sess, ref = both(string_identity(np.ndim(feed)))
    (got,), (want,) = sess.run(None, {"s": feed}), ref.run(None, {"s": as_ort_reads(feed)})
    assert got.dtype == want.dtype == object and got.shape == want.shape
    assert got.tolist() == want.tolist() and all(type(s) is str for s in got.ravel())


def test_string_inputs_through_a_label_encoder():
    node = h.make_node("LabelEncoder", ["s"], ["y"], domain="ai.onnx.ml", keys_strings=["cat", "dog", "ému"],
                       values_int64s=[1, 2, 3], default_int64=-1)
    model = _model([node], [h.make_tensor_value_info("s", T.STRING, [None])],
                   [h.make_tensor_value_info("y", T.INT64, [None])], ml_opset=True)
    sess, ref = both(model)
    for feed in (np.array(["dog", "ému", "cow", "cat"]), np.array([b"dog", b"cow"])):
        np.testing.assert_array_equal(sess.run(None, {"s": feed})[0], ref.run(None, {"s": as_ort_reads(feed)})[0])


def test_string_inputs_refused_where_they_do_not_fit():
    sess = ml.InferenceSession(string_identity())
    with pytest.raises(mlrt.InvalidArgument, match="not UTF-8"):
        sess.run(None, {"s": np.array([b"c\xffd"])})
    with pytest.raises(mlrt.InvalidArgument, match="expected tensor\\(string\\)"):
        sess.run(None, {"s": np.array([1, 2])})
    with pytest.raises(mlrt.InvalidArgument, match="expected tensor\\(float\\)"):
        ml.InferenceSession(add_model()).run(None, {"x": np.array([["1", "2", "3"]])})
    assert sess.run(None, {"s": np.array(["ok"])})[0].tolist() == ["ok"]  # still usable

