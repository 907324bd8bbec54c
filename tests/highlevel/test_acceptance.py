"""The high-level flow against the low-level API fed an independently tensorized input
(issue acceptance): an image classifier with one frame and with a batch of two frames
of different sizes, and an image-to-image model with a VideoFrame bound as its output,
on the CPU device and on the GPU (OpenCL) device.

The independent tensorization: the centre crop worked out here, cv2.resize
(INTER_LINEAR) of the cropped pixels, cv2.cvtColor and numpy for layout and
normalization.  cv2 rounds its resize to uint8 in fixed point, so inputs may differ
by up to one 0..255 step; the models' outputs are compared with that in mind.
"""

from pathlib import Path

import cv2
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import mlrt.lowlevel as ll
from mlrt import DeviceError
from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession, LearningModelSessionOptions)
from mlrt.media import BitmapPixelFormat, LearningModelPixelRange, VideoFrame

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def device(kind: str) -> LearningModelDevice:
    if kind == "cpu":
        return LearningModelDevice(LearningModelDeviceKind.CPU)
    try:
        return LearningModelDevice(LearningModelDeviceKind.GPU)
    except DeviceError as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")


def frame_pixels(h: int, w: int, seed: int) -> np.ndarray:
    """A BGR picture with structure (gradients and blocks), not just noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x // 16 + y // 16) % 2) * 200], -1)
    return np.clip(img + rng.integers(0, 40, img.shape), 0, 255).astype(np.uint8)


def centre_crop(h: int, w: int, th: int, tw: int) -> tuple:
    if w * th > h * tw:
        cw = round(h * tw / th)
        return (w - cw) // 2, 0, cw, h
    ch = round(w * th / tw)
    return 0, (h - ch) // 2, w, ch


def reference_tensor(bgr: np.ndarray, th: int, tw: int, rgb: bool, normalize) -> np.ndarray:
    x, y, cw, ch = centre_crop(*bgr.shape[:2], th, tw)
    crop = cv2.resize(bgr[y:y + ch, x:x + cw], (tw, th), interpolation=cv2.INTER_LINEAR)
    if rgb:
        crop = cv2.cvtColor(crop, cv2.COLOR_BGR2RGB)
    return normalize(crop.astype(np.float32)).transpose(2, 0, 1)


def classifier(batch) -> bytes:
    """A small CNN classifier (Conv, Relu, MaxPool, Conv, GlobalAveragePool, Gemm,
    Softmax) with fixed random weights and an IMAGE input whose metadata asks for
    RGB, 0..1, ImageNet mean/std."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.1, (8,)).astype(np.float32), "b1"),
             numpy_helper.from_array(rng.normal(0, 0.3, (16, 8, 3, 3)).astype(np.float32), "w2"),
             numpy_helper.from_array(rng.normal(0, 0.3, (10, 16)).astype(np.float32), "fc"),
             numpy_helper.from_array(rng.normal(0, 0.1, (10,)).astype(np.float32), "fcb")]
    nodes = [helper.make_node("Conv", ["data", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["logits"], transB=1),
             helper.make_node("Softmax", ["logits"], ["prob"], axis=1)]
    x = helper.make_tensor_value_info("data", TP.FLOAT, [batch, 3, 64, 64])
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("prob", TP.FLOAT, [batch, 10])
    m = helper.make_model(helper.make_graph(nodes, "classifier", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.helper.set_model_props(m, {"Image.BitmapPixelFormat": "Rgb8", "Image.NominalPixelRange": "Normalized_0_1",
                                    "Image.Mean": "0.485, 0.456, 0.406", "Image.Std": "0.229 0.224 0.225"})
    return m.SerializeToString()


def imagenet(x: np.ndarray) -> np.ndarray:
    return (x / 255.0 - MEAN) / STD


def low_level(model: bytes, kind: str, feeds: dict) -> list:
    providers = ["OpenCLExecutionProvider", "CPUExecutionProvider"] if kind == "gpu" else ["CPUExecutionProvider"]
    return ll.InferenceSession(model, providers=providers).run(None, feeds)


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_classifier_one_frame(kind):
    model = classifier(1)
    session = LearningModelSession(LearningModel.load(model), device(kind))
    bgr = frame_pixels(90, 150, 1)
    binding = LearningModelBinding(session)
    binding.bind("data", VideoFrame.from_numpy(bgr, BitmapPixelFormat.BGR8))
    got = session.evaluate(binding).outputs["prob"]
    assert tuple(binding.applied_bounds("data")) == centre_crop(90, 150, 64, 64)
    x = reference_tensor(bgr, 64, 64, True, imagenet)[None]
    (want,) = low_level(model, kind, {"data": x})
    assert got.shape == (1, 10)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3)
    assert got.argmax() == want.argmax()


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_classifier_batch_of_two_frames_of_different_sizes(kind):
    model = classifier("N")
    session = LearningModelSession(LearningModel.load(model), device(kind))
    a, b = frame_pixels(90, 150, 2), frame_pixels(200, 120, 3)
    binding = LearningModelBinding(session)
    binding.bind("data", [VideoFrame.from_numpy(a), VideoFrame.from_numpy(b)])
    got = session.evaluate(binding).outputs["prob"]
    assert binding.applied_bounds("data") == [centre_crop(90, 150, 64, 64), centre_crop(200, 120, 64, 64)]
    x = np.stack([reference_tensor(a, 64, 64, True, imagenet), reference_tensor(b, 64, 64, True, imagenet)])
    (want,) = low_level(model, kind, {"data": x})
    assert got.shape == (2, 10)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-3)


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_light_squeezenet_one_frame(kind):
    """A real architecture (SqueezeNet from onnx's light models): its input is a plain
    [1, 3, 224, 224] float tensor, so the frame binds by the best guess (BGR, 0..255)."""
    path = LIGHT / "light_squeezenet.onnx"
    session = LearningModelSession(LearningModel.load(path), device(kind))
    name = session.model.input_features[0].name
    bgr = frame_pixels(300, 260, 4)
    binding = LearningModelBinding(session)
    binding.bind(name, VideoFrame.from_numpy(bgr))
    got = session.evaluate(binding).outputs[session.model.output_features[0].name]
    x = reference_tensor(bgr, 224, 224, False, lambda v: v)[None]
    (want,) = low_level(str(path), kind, {name: x})
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * float(np.abs(want).max()))


def inverter(free: bool) -> bytes:
    """An image-to-image model: out = 255 - data on 0..255 RGB images, twice the size
    (Resize, nearest) so the output frame's size follows the model."""
    dims = ["N", 3, "H", "W"] if free else [1, 3, 40, 30]
    x = helper.make_tensor_value_info("data", TP.FLOAT, dims)
    x.type.denotation = "IMAGE"
    y = helper.make_tensor_value_info("image", TP.FLOAT, ["N", 3, "H2", "W2"] if free else [1, 3, 80, 60])
    y.type.denotation = "IMAGE"
    nodes = [helper.make_node("Sub", ["k255", "data"], ["inv"]),
             helper.make_node("Resize", ["inv", "", "scales"], ["image"], mode="nearest")]
    inits = [numpy_helper.from_array(np.array(255, np.float32), "k255"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    m = helper.make_model(helper.make_graph(nodes, "invert", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.helper.set_model_props(m, {"Image.BitmapPixelFormat": "Rgb8"})
    return m.SerializeToString()


@pytest.mark.parametrize("kind, gpu_frame", [("cpu", False), ("gpu", False), ("gpu", True)])
def test_image_to_image_output_bound_to_a_frame(kind, gpu_frame):
    model = inverter(False)
    session = LearningModelSession(LearningModel.load(model), device(kind))
    bgr = frame_pixels(40, 30, 5)
    out = VideoFrame.empty(60, 80, BitmapPixelFormat.BGRA8, gpu=gpu_frame)
    binding = LearningModelBinding(session)
    binding.bind("data", VideoFrame.from_numpy(bgr))
    binding.bind("image", out)
    result = session.evaluate(binding).outputs
    assert result["image"] is out
    x = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB).astype(np.float32).transpose(2, 0, 1)[None]
    (want,) = low_level(model, kind, {"data": x})
    want_bgra = np.concatenate([want[0, ::-1].transpose(1, 2, 0), np.full((80, 60, 1), 255.0)], axis=2)
    got = out.to_numpy().astype(np.int32)
    assert np.abs(got - np.clip(np.round(want_bgra), 0, 255)).max() <= 1


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_output_frame_of_another_size_is_scaled(kind):
    model = inverter(False)
    session = LearningModelSession(LearningModel.load(model), device(kind))
    bgr = frame_pixels(40, 30, 6)
    out = VideoFrame.empty(30, 40, BitmapPixelFormat.GRAY8)
    binding = LearningModelBinding(session)
    binding.bind("data", VideoFrame.from_numpy(bgr))
    binding.bind("image", out)
    session.evaluate(binding).raise_for_status()
    # 80x60 inverted image scaled by one half, then Rec.709 luma
    inv_rgb = 255 - cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB).astype(np.float32)
    luma = inv_rgb @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    assert np.abs(out.to_numpy().astype(np.float32) - luma).max() <= 1.01


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_free_size_image_model_takes_the_frame_size(kind):
    model = inverter(True)
    session = LearningModelSession(LearningModel.load(model), device(kind),
                                   LearningModelSessionOptions(batch_size_override=0))
    bgr = frame_pixels(21, 34, 8)
    binding = LearningModelBinding(session)
    binding.bind("data", VideoFrame.from_numpy(bgr), pixel_range=LearningModelPixelRange.ZERO_TO_255)
    got = session.evaluate(binding).outputs["image"]
    assert got.shape == (1, 3, 42, 68)
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB).astype(np.float32).transpose(2, 0, 1)
    np.testing.assert_array_equal(got[0, :, ::2, ::2], 255 - rgb)  # identity size: exact pixels
