"""mlrt.highlevel's classes with Windows ML's semantics: models and descriptors,
devices, session options, bindings (values of every kind, names matched
case-insensitively, preallocated outputs), evaluate / evaluate_async /
evaluate_features / evaluate_stream, results and errors."""

import io
import threading
from concurrent.futures import Future

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import mlrt
from mlrt.highlevel import (ImageFeatureDescriptor, ImageFeatureValue, LearningModel, LearningModelBinding,
                            LearningModelDevice, LearningModelDeviceKind, LearningModelEvaluationResult,
                            LearningModelFeatureKind, LearningModelSession, LearningModelSessionOptions,
                            MapFeatureDescriptor, SequenceFeatureDescriptor, TensorFeatureDescriptor, TensorFloat,
                            TensorInt64Bit, TensorKind, TensorString)
from mlrt.media import BitmapBounds, BitmapPixelFormat, LearningModelPixelRange, VideoFrame


def add_model(shape=("N", 4)) -> onnx.ModelProto:
    """y = a + b, float32; a documented, metadata set."""
    a = helper.make_tensor_value_info("A", TP.FLOAT, list(shape))
    a.doc_string = "first addend"
    b = helper.make_tensor_value_info("b", TP.FLOAT, list(shape))
    y = helper.make_tensor_value_info("Sum", TP.FLOAT, list(shape))
    m = helper.make_model(helper.make_graph([helper.make_node("Add", ["A", "b"], ["Sum"])], "adder", [a, b], [y]),
                          opset_imports=[helper.make_opsetid("", 17)], producer_name="tests", doc_string="adds",
                          model_version=3, domain="org.mlrt")
    helper.set_model_props(m, {"license": "MIT"})
    return m


def image_model(dtype=TP.FLOAT, shape=(1, 3, 8, 8), meta=None) -> bytes:
    x = helper.make_tensor_value_info("img", dtype, list(shape))
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("out", dtype, list(shape))
    m = helper.make_model(helper.make_graph([helper.make_node("Identity", ["img"], ["out"])], "id", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    if meta:
        helper.set_model_props(m, meta)
    return m.SerializeToString()


def session_of(model, **options) -> LearningModelSession:
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return LearningModelSession(LearningModel.load(data), options=LearningModelSessionOptions(**options))


# -- LearningModel -----------------------------------------------------------------------------------
def test_model_loads_from_path_bytes_and_file(tmp_path):
    m = add_model()
    path = tmp_path / "add.onnx"
    onnx.save(m, path)
    for source in (path, str(path), m.SerializeToString(), io.BytesIO(m.SerializeToString())):
        model = LearningModel.load(source)
        assert (model.author, model.name, model.domain, model.description, model.version) == \
               ("tests", "adder", "org.mlrt", "adds", 3)
        assert dict(model.metadata) == {"license": "MIT"}
        with pytest.raises(TypeError):
            model.metadata["x"] = "y"  # read-only
        a, b = model.input_features
        assert a == TensorFeatureDescriptor("A", "first addend", True, TensorKind.FLOAT, (None, 4))
        assert a.kind is LearningModelFeatureKind.TENSOR and b.name == "b"
        assert [f.name for f in model.output_features] == ["Sum"]


def test_model_load_errors(tmp_path):
    missing = tmp_path / "missing.onnx"
    with pytest.raises(mlrt.NoSuchFile, match="missing.onnx does not exist") as high:  # as mlrt.lowlevel says
        LearningModel.load(missing)
    with pytest.raises(mlrt.NoSuchFile) as low:
        mlrt.lowlevel.InferenceSession(str(missing))
    assert type(high.value) is type(low.value) and isinstance(high.value, FileNotFoundError)
    (tmp_path / "dir.onnx").mkdir()
    with pytest.raises(mlrt.InvalidModel, match="dir.onnx is a directory") as info:
        LearningModel.load(tmp_path / "dir.onnx")
    assert not isinstance(info.value, mlrt.NoSuchFile)
    (tmp_path / "empty.onnx").write_bytes(b"")
    for source, what in ((tmp_path / "empty.onnx", "empty.onnx holds no ONNX model"),
                         (str(tmp_path / "empty.onnx"), "empty.onnx holds no ONNX model"),
                         (b"", "holds no ONNX model"), (io.BytesIO(b""), "holds no ONNX model")):
        with pytest.raises(mlrt.InvalidModel, match=what):  # refused at load, not at the first session
            LearningModel.load(source)
    (tmp_path / "no_graph.onnx").write_bytes(onnx.ModelProto(ir_version=8, producer_name="x").SerializeToString())
    with pytest.raises(mlrt.InvalidModel, match="no_graph.onnx holds no ONNX model .*no graph"):
        LearningModel.load(tmp_path / "no_graph.onnx")
    with pytest.raises(mlrt.InvalidModel, match="not an ONNX model"):
        LearningModel.load(b"\x08\x07garbage\xff")
    with pytest.raises(mlrt.InvalidArgument, match="expected a path"):
        LearningModel.load(42)


def test_an_unknown_output_name_says_which_exist():
    session = session_of(add_model())
    result = session.evaluate_features({"A": np.ones((2, 4), np.float32), "b": np.ones((2, 4), np.float32)})
    with pytest.raises(mlrt.NoSuchFeature, match=r"no output 'prob' \(its outputs: 'Sum'\)") as info:
        result.outputs["prob"]
    assert isinstance(info.value, KeyError) and isinstance(info.value, mlrt.InvalidArgument)
    assert str(info.value).startswith("the result has no output")  # (not KeyError's quoted repr)
    assert result.outputs.get("prob") is None and "prob" not in result.outputs
    np.testing.assert_array_equal(result.outputs["sum"], result.outputs["Sum"])  # case, as bind names
    assert list(result.outputs) == ["Sum"] and len(result.outputs) == 1
    with pytest.raises(TypeError):
        result.outputs["Sum"] = 1  # read-only


def test_image_descriptor_from_denotation_and_metadata():
    model = LearningModel.load(image_model(shape=("N", 1, None, 32),
                                           meta={"Image.BitmapPixelFormat": "Gray8",
                                                 "Image.NominalPixelRange": "Normalized_1_1"}))
    (d,) = model.input_features
    assert isinstance(d, ImageFeatureDescriptor) and d.kind is LearningModelFeatureKind.IMAGE
    assert (d.bitmap_pixel_format, d.pixel_range, d.width, d.height) == \
           (BitmapPixelFormat.GRAY8, LearningModelPixelRange.MINUS_ONE_TO_ONE, 32, None)
    guessed = LearningModel.load(image_model()).input_features[0]
    assert (guessed.bitmap_pixel_format, guessed.pixel_range) == (BitmapPixelFormat.BGR8,
                                                                  LearningModelPixelRange.ZERO_TO_255)


def test_map_and_sequence_descriptors_and_values():
    """A scikit-learn-style output: ZipMap gives a sequence of maps (int64 -> float)."""
    x = helper.make_tensor_value_info("x", TP.FLOAT, [None, 2])
    y = helper.make_value_info("probs", helper.make_sequence_type_proto(
        helper.make_map_type_proto(TP.INT64, helper.make_tensor_type_proto(TP.FLOAT, []))))
    node = helper.make_node("ZipMap", ["x"], ["probs"], domain="ai.onnx.ml", classlabels_int64s=[3, 7])
    m = helper.make_model(helper.make_graph([node], "zip", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    session = session_of(m)
    (d,) = session.model.output_features
    assert isinstance(d, SequenceFeatureDescriptor) and isinstance(d.element_descriptor, MapFeatureDescriptor)
    assert d.element_descriptor.key_kind is TensorKind.INT64
    out = session.evaluate_features({"x": np.array([[0.25, 0.75]], np.float32)}).outputs["probs"]
    assert len(out) == 1 and out[0][3] == pytest.approx(0.25) and out[0][7] == pytest.approx(0.75)


def test_closed_model_cannot_make_sessions_but_its_session_runs():
    model = LearningModel.load(add_model().SerializeToString())
    session = LearningModelSession(model, options=LearningModelSessionOptions(close_model_on_session_creation=True))
    assert model.is_closed and model.name == "adder"  # properties survive close()
    with pytest.raises(mlrt.InvalidArgument, match="closed"):
        LearningModelSession(model)
    one = np.ones((1, 4), np.float32)
    np.testing.assert_array_equal(session.evaluate_features({"A": one, "b": one}).outputs["Sum"], one * 2)
    with LearningModel.load(add_model().SerializeToString()) as m2:
        assert not m2.is_closed
    assert m2.is_closed


# -- devices and options -----------------------------------------------------------------------------
def test_devices():
    cpu = LearningModelDevice(LearningModelDeviceKind.CPU)
    assert not cpu.is_gpu and cpu.device_name
    assert not LearningModelDevice().is_gpu  # DEFAULT runs on the CPU
    with pytest.raises(mlrt.InvalidArgument):
        LearningModelDevice("gpu")
    try:
        gpu = LearningModelDevice(LearningModelDeviceKind.GPU_HIGH_PERFORMANCE)
    except mlrt.DeviceError as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")
    from mlrt.native.opencl._device import default_device
    assert gpu.is_gpu and gpu.device_name == default_device().name
    session = LearningModelSession(LearningModel.load(add_model().SerializeToString()), gpu)
    assert session._session.get_providers()[0] == "OpenCLExecutionProvider"


def test_a_gpu_kind_on_a_cpu_opencl_device_says_so_once(monkeypatch):
    from mlrt.highlevel import DeviceWarning, _device
    try:
        from mlrt.native.opencl._device import default_device
        device = default_device()
    except (ImportError, mlrt.DeviceError) as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")
    monkeypatch.setattr(_device, "_warned", threading.Event())  # (as in a new process)
    with pytest.warns() as record:
        LearningModelDevice(LearningModelDeviceKind.GPU)
        LearningModelDevice(LearningModelDeviceKind.GPU_MIN_POWER)
        LearningModelDevice(LearningModelDeviceKind.CPU)
    said = [w for w in record if issubclass(w.category, DeviceWarning)]
    if device.is_gpu:
        assert not said
        return
    assert len(said) == 1 and issubclass(DeviceWarning, UserWarning)  # once per process
    message = str(said[0].message)
    assert f"'{device.name}'" in message and "a CPU, not a GPU" in message and "LearningModelDeviceKind.CPU" in message
    assert said[0].filename == __file__  # the caller's line, not mlrt's


def test_named_dimension_overrides_fix_shapes():
    session = session_of(add_model(("N", "F")), named_dimension_overrides={"F": 4})
    session.options.override_named_dimension("N", 2)  # after creation: no effect on this session
    a = session._feature("a")
    assert a.shape == (None, 4)
    with pytest.raises(mlrt.InvalidArgument, match="expected shape"):
        LearningModelBinding(session).bind("A", np.ones((1, 5), np.float32))
    with pytest.raises(mlrt.InvalidArgument, match="int >= 1"):
        LearningModelSessionOptions(named_dimension_overrides={"N": 0})


def test_batch_size_override_applies_to_data_batch_dimensions():
    m = add_model(("N", 4))
    for vi in m.graph.input:
        vi.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    assert session_of(m)._feature("A").shape == (1, 4)  # Windows ML's default override is 1
    assert session_of(m, batch_size_override=0)._feature("A").shape == (None, 4)
    assert session_of(m, batch_size_override=3)._feature("A").shape == (3, 4)


def test_intra_op_threads():
    session = session_of(add_model(), intra_op_num_threads=1)
    assert session._session.get_session_options().intra_op_num_threads == 1


# -- binding and evaluation --------------------------------------------------------------------------
def test_bind_names_case_insensitively_and_mapping_protocol():
    session = session_of(add_model())
    binding = LearningModelBinding(session)
    a = np.arange(4, dtype=np.float32)[None]
    binding.bind("a", a)
    binding.bind("B", TensorFloat.create_from_array([1, 4], [1, 1, 1, 1]))
    assert "A" in binding and "b" in binding and "sum" not in binding and len(binding) == 2
    assert binding["a"] is a and sorted(binding) == ["A", "b"]
    result = session.evaluate(binding, correlation_id="run-1")
    assert isinstance(result, LearningModelEvaluationResult) and result.succeeded and result.correlation_id == "run-1"
    np.testing.assert_array_equal(result.outputs["Sum"], a + 1)  # unbound output: allocated and returned
    binding.clear()
    assert len(binding) == 0
    with pytest.raises(mlrt.InvalidArgument, match="not an input or output.*A, b, Sum"):
        binding.bind("c", a)


def test_preallocated_outputs_are_written():
    session = session_of(add_model())
    one = np.ones((2, 4), np.float32)
    for out in (np.zeros((2, 4), np.float32), TensorFloat.create([2, 4])):
        binding = LearningModelBinding(session)
        binding.bind("A", one)
        binding.bind("b", one)
        binding.bind("sum", out)
        result = session.evaluate(binding).outputs
        assert result["Sum"] is out
        np.testing.assert_array_equal(np.asarray(out), one * 2)
    with pytest.raises(mlrt.InvalidArgument, match="expected shape"):
        LearningModelBinding(session).bind("Sum", np.zeros((2, 5), np.float32))
    with pytest.raises(mlrt.InvalidArgument, match="float32"):
        LearningModelBinding(session).bind("Sum", np.zeros((2, 4), np.int32))


def test_bind_errors_name_the_feature_and_leave_the_binding_usable():
    session = session_of(add_model())
    binding = LearningModelBinding(session)
    with pytest.raises(mlrt.InvalidArgument, match="'A'.*expected float32.*int64|'A'.*expected float"):
        binding.bind("A", np.ones((1, 4), np.int64))
    with pytest.raises(mlrt.InvalidArgument, match="'A'.*expected shape"):
        binding.bind("A", np.ones((1, 3), np.float32))
    with pytest.raises(mlrt.InvalidArgument, match="apply to frames"):
        binding.bind("A", np.ones((1, 4), np.float32), pixel_range=LearningModelPixelRange.ZERO_TO_ONE)
    with pytest.raises(mlrt.InvalidArgument, match="not an image feature"):
        binding.bind("A", VideoFrame.empty(4, 4))
    binding.bind("A", np.ones((1, 4)))  # float64 converts to the feature's float32
    result = session.evaluate(binding)  # b is missing: a failed result, not an exception
    assert not result.succeeded and isinstance(result.error_status, mlrt.InvalidArgument)
    assert "b not bound" in str(result.error_status)
    with pytest.raises(mlrt.InvalidArgument, match="b not bound"):
        result.outputs
    binding.bind("b", np.ones((1, 4), np.float32))
    np.testing.assert_array_equal(session.evaluate(binding).outputs["Sum"], np.full((1, 4), 2, np.float32))


def test_evaluate_async_and_features():
    session = session_of(add_model())
    futures = []
    for i in range(8):
        binding = LearningModelBinding(session)
        binding.bind("A", np.full((1, 4), i, np.float32))
        binding.bind("b", np.ones((1, 4), np.float32))
        futures.append(session.evaluate_async(binding, correlation_id=str(i)))
    assert all(isinstance(f, Future) for f in futures)
    for i, f in enumerate(futures):
        r = f.result(timeout=30)
        assert r.correlation_id == str(i) and r.outputs["Sum"][0, 0] == i + 1
    r = session.evaluate_features({"a": np.zeros((1, 4), np.float32), "B": np.ones((1, 4), np.float32)}, "f")
    assert r.correlation_id == "f" and r.outputs["Sum"].sum() == 4
    other = session_of(add_model())
    with pytest.raises(mlrt.InvalidArgument, match="another session"):
        session.evaluate(LearningModelBinding(other))
    session.close()
    with pytest.raises(mlrt.InvalidArgument, match="closed"):
        LearningModelBinding(session).bind("A", np.zeros((1, 4), np.float32))


def test_evaluate_from_many_threads_gives_each_its_result():
    session = session_of(add_model())
    errors, results = [], {}

    def work(i):
        try:
            for j in range(20):
                r = session.evaluate_features({"A": np.full((1, 4), i, np.float32),
                                               "b": np.full((1, 4), j, np.float32)})
                assert r.outputs["Sum"][0, 0] == i + j
            results[i] = True
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 6


def test_tensor_values():
    t = TensorInt64Bit.create_from_array((2, 2), [1, 2, 3, 4])
    assert t.shape == (2, 2) and t.tensor_kind is TensorKind.INT64 and np.asarray(t).dtype == np.int64
    assert TensorFloat.create([3]).numpy().tolist() == [0, 0, 0]
    assert TensorFloat.create_from_numpy(np.arange(3)).numpy().dtype == np.float32
    s = TensorString.create_from_array([2], ["a", "bc"])
    assert s.numpy().tolist() == ["a", "bc"] and s.tensor_kind is TensorKind.STRING
    with pytest.raises(mlrt.InvalidArgument, match="3 values for shape"):
        TensorFloat.create_from_array([2, 2], [1, 2, 3])
    with pytest.raises(mlrt.InvalidArgument, match="negative"):
        TensorFloat.create([-1])


# -- images ---------------------------------------------------------------------------------------
def test_image_properties_metadata_and_guess():
    pixels = np.random.default_rng(0).integers(0, 256, (8, 8, 3), dtype=np.uint8)  # BGR
    frame = VideoFrame.from_numpy(pixels, BitmapPixelFormat.BGR8)
    bgr = pixels.astype(np.float32).transpose(2, 0, 1)[None]
    guess = session_of(image_model())
    np.testing.assert_array_equal(guess.evaluate_features({"img": frame}).outputs["out"], bgr)
    meta = session_of(image_model(meta={"Image.BitmapPixelFormat": "Rgb8", "Image.NominalPixelRange": "Normalized_0_1"}))
    np.testing.assert_allclose(meta.evaluate_features({"img": frame}).outputs["out"], bgr[:, ::-1] / 255, atol=1e-6)
    binding = LearningModelBinding(meta)  # bind properties win over metadata
    binding.bind("img", ImageFeatureValue.create_from_video_frame(frame), bitmap_pixel_format=BitmapPixelFormat.BGR8,
                 pixel_range=LearningModelPixelRange.MINUS_ONE_TO_ONE, mean=0.5, std=(0.5, 0.25, 0.5))
    want = (bgr / 127.5 - 1 - 0.5) / np.array([0.5, 0.25, 0.5], np.float32)[:, None, None]
    np.testing.assert_allclose(meta.evaluate(binding).outputs["out"], want, atol=1e-5)


def test_gray_nhwc_and_uint8_targets():
    pixels = np.random.default_rng(1).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    frame = VideoFrame.from_numpy(pixels, BitmapPixelFormat.RGB8)
    luma = pixels.astype(np.float32) @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    gray = session_of(image_model(shape=(1, 1, 8, 8))).evaluate_features({"img": frame}).outputs["out"]
    assert np.abs(gray[0, 0] - luma).max() < 1e-3
    nhwc = session_of(image_model(dtype=TP.UINT8, shape=(1, 8, 8, 3))).evaluate_features({"img": frame})
    np.testing.assert_array_equal(nhwc.outputs["out"][0], pixels[:, :, ::-1])  # guess BGR: channels swapped
    half = session_of(image_model(dtype=TP.FLOAT16)).evaluate_features({"img": frame}).outputs["out"]
    assert half.dtype == np.float16 and np.array_equal(half[0, 2], pixels[:, :, 0].astype(np.float16))


def test_bitmap_bounds_and_batches():
    pixels = np.arange(20 * 30 * 3, dtype=np.uint32).reshape(20, 30, 3).astype(np.uint8)
    frame = VideoFrame.from_numpy(pixels)
    session = session_of(image_model(shape=("N", 3, 8, 8)), batch_size_override=0)
    binding = LearningModelBinding(session)
    binding.bind("img", frame, bitmap_bounds=BitmapBounds(4, 2, 8, 8))
    out = session.evaluate(binding).outputs["out"]
    np.testing.assert_array_equal(out[0], pixels[2:10, 4:12].transpose(2, 0, 1))  # the rectangle, unscaled
    assert binding.applied_bounds("IMG") == BitmapBounds(4, 2, 8, 8)
    binding.bind("img", [frame, frame], bitmap_bounds=[(0, 0, 8, 8), (22, 12, 8, 8)])
    out = session.evaluate(binding).outputs["out"]
    np.testing.assert_array_equal(out[1], pixels[12:20, 22:30].transpose(2, 0, 1))
    with pytest.raises(mlrt.InvalidArgument, match="not a non-empty rectangle inside"):
        binding.bind("img", frame, bitmap_bounds=(25, 0, 8, 8))
    with pytest.raises(mlrt.InvalidArgument, match="2 bitmap_bounds for 1 frames"):
        binding.bind("img", [frame], bitmap_bounds=[(0, 0, 8, 8), (0, 0, 8, 8)])
    fixed = session_of(image_model())
    with pytest.raises(mlrt.InvalidArgument, match="batch of 1, got 2"):
        LearningModelBinding(fixed).bind("img", [frame, frame])


def test_free_dimensions_follow_the_frame():
    session = session_of(image_model(shape=(1, 3, 6, None)))  # height fixed: width keeps the aspect ratio
    binding = LearningModelBinding(session)
    binding.bind("img", VideoFrame.empty(40, 10, BitmapPixelFormat.BGR8), bitmap_bounds=(0, 0, 20, 10))
    assert session.evaluate(binding).outputs["out"].shape == (1, 3, 6, 12)
    both = session_of(image_model(shape=(None, 3, None, None)), batch_size_override=0)
    binding = LearningModelBinding(both)
    binding.bind("img", [VideoFrame.empty(7, 5, BitmapPixelFormat.GRAY8)] * 2)
    assert both.evaluate(binding).outputs["out"].shape == (2, 3, 5, 7)
    with pytest.raises(mlrt.InvalidArgument, match="different sizes"):
        binding.bind("img", [VideoFrame.empty(7, 5), VideoFrame.empty(8, 5)])


def test_gpu_resident_pipeline_reads_nothing_back(monkeypatch):
    """A GPU frame in, a GPU frame out, on a GPU device: tensorization, inference and
    detensorization stay on the device (no DeviceTensor is read back to the host)."""
    try:
        gpu = LearningModelDevice(LearningModelDeviceKind.GPU)
    except mlrt.DeviceError as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")
    from mlrt.native.opencl._memory import DeviceTensor  # (the GPU device is OpenCL's here)
    x = helper.make_tensor_value_info("img", TP.FLOAT, [1, 3, 16, 16])
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("out", TP.FLOAT, [1, 3, 16, 16])
    y.type.denotation = "IMAGE"
    w = numpy_helper.from_array(np.eye(3, dtype=np.float32)[::-1].reshape(3, 3, 1, 1).copy(), "w")
    m = helper.make_model(helper.make_graph([helper.make_node("Conv", ["img", "w"], ["out"])], "swap", [x], [y], [w]),
                          opset_imports=[helper.make_opsetid("", 17)])
    session = LearningModelSession(LearningModel.load(m.SerializeToString()), gpu)
    pixels = np.random.default_rng(2).integers(0, 256, (16, 16, 4), dtype=np.uint8)
    source = VideoFrame.from_numpy(pixels, BitmapPixelFormat.BGRA8).to_gpu()
    out = VideoFrame.empty(16, 16, BitmapPixelFormat.BGRA8, gpu=True)
    binding = LearningModelBinding(session)

    def no_readback(self):
        raise AssertionError("a device tensor was read back to the host")

    with monkeypatch.context() as patch:
        patch.setattr(DeviceTensor, "numpy", no_readback)
        binding.bind("img", source)
        binding.bind("out", out)
        session.evaluate(binding).raise_for_status()
    got = out.to_numpy()
    np.testing.assert_array_equal(got[:, :, :3], pixels[:, :, 2::-1])  # the Conv swaps B and R
    assert (got[:, :, 3] == 255).all()
