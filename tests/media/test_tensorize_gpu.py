"""The OpenCL image kernels (native/opencl/tensorize.cl, reached through media/_gpu.py and
the OpenCL provider's image_kernel) against an independent reference: OpenCV
(cv2.cvtColor to BGRA, cv2.resize INTER_LINEAR of the cropped uint8 image) and numpy for
luma, channel order, normalization and layout.

cv2.resize works in 11-bit fixed point and rounds to uint8, so it sits up to ~0.8 of a
0..255 step from exact bilinear: the comparison allows one step (HIGHLEVEL.md's "within
±1 of a 0..255 step"), scaled by the channel's alpha, plus float16's rounding.  Where
exactness is the contract (an unscaled crop, the detensorize round trip) it is exact,
and onnx.reference's Resize (linear, half_pixel: the same taps, exact weights) checks
the float32 result tightly.
"""

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import mlrt
import mlrt.lowlevel as ml
from mlrt.media import _gpu
from mlrt.media._formats import BitmapPixelFormat as PF
from mlrt.native.opencl._device import Device
from mlrt.native.opencl._memory import DeviceTensor
from opencl_check import opencl_device

cv2 = pytest.importorskip("cv2", reason="the reference needs OpenCV (opencv-python-headless)")

STEP = 1.0  # allowed distance from the OpenCV reference, in steps of the 0..255 pixel scale
FORMATS = [PF.BGRA8, PF.RGBA8, PF.BGR8, PF.RGB8, PF.GRAY8]
TYPES = [np.float32, np.float16, np.uint8]
TO_BGRA = {PF.RGBA8: cv2.COLOR_RGBA2BGRA, PF.BGR8: cv2.COLOR_BGR2BGRA, PF.RGB8: cv2.COLOR_RGB2BGRA,
           PF.GRAY8: cv2.COLOR_GRAY2BGRA}
# (frame height, width), crop (x, y, width, height), output (H, W): up and down, odd sizes, edges
GEOMETRIES = [
    ((13, 127), (0, 0, 127, 13), (1, 2)),
    ((1, 1), (0, 0, 1, 1), (13, 13)),
    ((2, 2), (0, 0, 2, 2), (127, 1)),
    ((127, 13), (0, 0, 13, 127), (13, 127)),
    ((40, 60), (0, 0, 60, 40), (20, 30)),       # exactly half (cv2 takes its area path: the same taps)
    ((30, 41), (7, 3, 21, 19), (11, 3)),        # an inner crop
    ((30, 41), (29, 17, 12, 13), (40, 27)),     # a crop at the right and bottom edges, upscaled
    ((9, 9), (4, 4, 1, 1), (2, 13)),            # one pixel
]

rng = np.random.default_rng(7)


@pytest.fixture(scope="module")
def device():
    return opencl_device()


def frame(height, width, fmt):
    return rng.integers(0, 256, (height, width, fmt.channels), np.uint8)


def empty_tensor(device, shape, dtype, fill=0):
    return device.upload(np.full(shape, fill, dtype), blocking=True)


def shape_of(n, c, hw, nhwc):
    return (n, *hw, c) if nhwc else (n, c, *hw)


def norm(c, dtype):
    """(alpha, beta) per channel: 0..1 and -1..1 mixes for floats, 0..255 with a shift for uint8."""
    if np.dtype(dtype) == np.uint8:
        return [1.0, 1.0, 1.0, 1.0][:c], [0.0, -20.0, 30.0, 0.0][:c]
    return [1 / 255, 1 / 127.5, 1.0, 2.0][:c], [0.0, -1.0, 0.0, -3.0][:c]


# -- the reference -----------------------------------------------------------------------------------
def ref_values(img, fmt, crop, hw, c, rgb):
    """The output image's values v (float64 [H, W, C], 0..255 scale) by OpenCV."""
    x, y, w, hgt = crop
    part = np.ascontiguousarray(img[y:y + hgt, x:x + w])
    bgra = part if fmt is PF.BGRA8 else cv2.cvtColor(part[..., 0] if fmt is PF.GRAY8 else part, TO_BGRA[fmt])
    small = cv2.resize(bgra, (hw[1], hw[0]), interpolation=cv2.INTER_LINEAR).reshape(hw[0], hw[1], 4)
    small = small.astype(np.float64)
    b, g, r, a = (small[..., i] for i in range(4))
    if c == 1:
        planes = [b if fmt is PF.GRAY8 else 0.2126 * r + 0.7152 * g + 0.0722 * b]
    else:
        planes = ([r, g, b] if rgb else [b, g, r]) + ([a] if c == 4 else [])
    return np.stack(planes, axis=-1)


def ref_tensor(values, alpha, beta, dtype):
    y = values * np.asarray(alpha) + np.asarray(beta)
    if np.dtype(dtype) == np.uint8:
        return np.clip(np.sign(y) * np.floor(np.abs(y) + 0.5), 0, 255)
    return y


def image_of(t, index, nhwc):
    """Image `index` of a host tensor as [H, W, C]."""
    return t[index] if nhwc else t[index].transpose(1, 2, 0)


def assert_close(got, want, alpha, dtype, what):
    """got, want: [H, W, C]; within STEP (scaled by alpha), plus rounding of the output type."""
    got = got.astype(np.float64)
    tol = np.abs(np.asarray(alpha, np.float64)) * STEP + 1e-6
    if np.dtype(dtype) == np.uint8:
        tol = tol + 0.5  # the two sides may round a value that close to .5 different ways
    elif np.dtype(dtype) == np.float16:
        tol = tol + np.abs(want) * 2.0 ** -11
    err = np.abs(got - want)
    assert np.all(err <= tol), f"{what}: off by {err.max():.4g} at {np.unravel_index(np.argmax(err - tol), err.shape)}"


def run_tensorize(device, img, fmt, crop, hw, c, rgb, nhwc, dtype, alpha, beta, n=1, index=0, fill=0):
    out = empty_tensor(device, shape_of(n, c, hw, nhwc), dtype, fill)
    _gpu.tensorize(device.upload(img), fmt, crop, out, index, rgb=rgb, nhwc=nhwc, alpha=alpha, beta=beta)
    return out.numpy()


# -- tensorize ---------------------------------------------------------------------------------------
def test_programs_build_for_every_tensor_type(device):
    for dtype in TYPES:
        device.program("tensorize", dtype)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("rgb", [False, True], ids=["bgr", "rgb"])
@pytest.mark.parametrize("c", [1, 3, 4])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_matches_opencv(device, fmt, c, rgb, nhwc, dtype):
    alpha, beta = norm(c, dtype)
    for size, crop, hw in GEOMETRIES:
        img = frame(*size, fmt)
        got = run_tensorize(device, img, fmt, crop, hw, c, rgb, nhwc, dtype, alpha, beta)
        assert got.dtype == np.dtype(dtype) and got.shape == shape_of(1, c, hw, nhwc)
        want = ref_tensor(ref_values(img, fmt, crop, hw, c, rgb), alpha, beta, dtype)
        assert_close(image_of(got, 0, nhwc), want, alpha, dtype, f"{size} crop {crop} -> {hw}")


def test_large_frame_centre_crop(device):
    """1920 x 1080 BGR8, centre crop, 224 x 224 RGB in 0..1: the classifier's input."""
    img = frame(1080, 1920, PF.BGR8)
    crop = ((1920 - 1080) // 2, 0, 1080, 1080)
    got = run_tensorize(device, img, PF.BGR8, crop, (224, 224), 3, True, False, np.float32, [1 / 255] * 3, [0.0] * 3)
    want = ref_values(img, PF.BGR8, crop, (224, 224), 3, True) / 255
    assert_close(image_of(got, 0, False), want, [1 / 255] * 3, np.float32, "1080p")


@pytest.mark.parametrize("fmt", [PF.BGRA8, PF.RGB8, PF.GRAY8], ids=lambda f: f.name)
def test_bilinear_matches_onnx_resize(device, fmt):
    """Exact bilinear (half_pixel, edges clamped): onnx.reference's Resize on the float crop."""
    for size, crop, hw in GEOMETRIES:
        img = frame(*size, fmt)
        x, y, w, hgt = crop
        part = img[y:y + hgt, x:x + w].astype(np.float32).transpose(2, 0, 1)[None]
        node = h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear",
                           coordinate_transformation_mode="half_pixel")
        graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, None)],
                             [h.make_tensor_value_info("y", TP.FLOAT, None)],
                             [numpy_helper.from_array(np.array([1, part.shape[1], *hw], np.int64), "sizes")])
        want = ReferenceEvaluator(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])).run(
            None, {"x": part})[0][0].transpose(1, 2, 0).astype(np.float64)
        if fmt.is_rgb_order:
            want = want[..., [2, 1, 0]]
        c = fmt.channels
        got = run_tensorize(device, img, fmt, crop, hw, c, False, True, np.float32, [1.0] * c, [0.0] * c)
        np.testing.assert_allclose(got[0], want, atol=2e-3, err_msg=f"{size} crop {crop} -> {hw}")


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_unscaled_crop_is_exact(device, fmt, dtype):
    """A crop the tensor's size copies its pixels bit for bit (0..255 is exact in every type)."""
    img = frame(17, 23, fmt)
    crop = (5, 2, 13, 9)
    c = 1 if fmt is PF.GRAY8 else 3
    got = run_tensorize(device, img, fmt, crop, (9, 13), c, fmt.is_rgb_order, True, dtype, [1.0] * c, [0.0] * c)
    np.testing.assert_array_equal(got[0], img[2:11, 5:18, :c])


@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
def test_other_images_of_the_batch_untouched(device, nhwc):
    img = frame(20, 30, PF.BGR8)
    alpha, beta = [1 / 255] * 3, [0.0] * 3
    got = run_tensorize(device, img, PF.BGR8, (0, 0, 30, 20), (7, 5), 3, False, nhwc, np.float32, alpha, beta,
                        n=4, index=2, fill=-7)
    for i in (0, 1, 3):
        assert np.all(got[i] == -7), f"image {i} was written"
    want = ref_values(img, PF.BGR8, (0, 0, 30, 20), (7, 5), 3, False) / 255
    assert_close(image_of(got, 2, nhwc), want, alpha, np.float32, "image 2")


def test_uint8_rounds_and_clamps(device):
    """uint8 outputs: rounded half away from zero, clamped to 0..255."""
    img = np.array([[[0], [1], [100], [255]]], np.uint8)  # GRAY8, 1 x 4, unscaled
    got = run_tensorize(device, img, PF.GRAY8, (0, 0, 4, 1), (1, 4), 3, False, True, np.uint8,
                        [0.5, -1.0, 2.0], [0.0, 10.0, -100.0])
    np.testing.assert_array_equal(got[0, 0], [[0, 10, 0], [1, 9, 0], [50, 0, 100], [128, 0, 255]])


# -- detensorize -------------------------------------------------------------------------------------
def ref_detensorize(tensor, index, c, rgb, nhwc, alpha, beta, fmt):
    v = np.clip(image_of(tensor, index, nhwc).astype(np.float64) * np.asarray(alpha) + np.asarray(beta), 0, 255)
    if c == 1:
        b = g = r = v[..., 0]
    else:
        r, g, b = (v[..., 0], v[..., 1], v[..., 2]) if rgb else (v[..., 2], v[..., 1], v[..., 0])
    gray = b if c == 1 else 0.2126 * r + 0.7152 * g + 0.0722 * b
    alpha8 = np.full_like(b, 255)
    planes = {PF.BGRA8: [b, g, r, alpha8], PF.RGBA8: [r, g, b, alpha8], PF.BGR8: [b, g, r], PF.RGB8: [r, g, b],
              PF.GRAY8: [gray]}[fmt]
    return np.floor(np.stack(planes, axis=-1) + 0.5)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("rgb", [False, True], ids=["bgr", "rgb"])
@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_detensorize_matches_reference(device, fmt, c, rgb, nhwc, dtype):
    if np.dtype(dtype) == np.uint8:
        alpha, beta = [1.0, 2.0, 0.5][:c], [0.0, -50.0, 20.0][:c]
        values = rng.integers(0, 256, (3, 13, 127, c))
    else:
        alpha, beta = [255.0, 127.5, 1.0][:c], [0.0, 127.5, 0.0][:c]
        values = rng.uniform(-1.2, 1.2, (3, 13, 127, c)) * [1, 1, 255][:c]
    host = values.astype(dtype)
    if not nhwc:
        host = np.ascontiguousarray(host.transpose(0, 3, 1, 2))
    out = empty_tensor(device, (13, 127, fmt.channels), np.uint8, 77)
    _gpu.detensorize(device.upload(host), 1, rgb=rgb, nhwc=nhwc, alpha=alpha, beta=beta, out=out, pixel_format=fmt)
    got = out.numpy().astype(np.int64)
    want = ref_detensorize(host, 1, c, rgb, nhwc, alpha, beta, fmt)
    assert np.abs(got - want).max() <= 1, f"off by {np.abs(got - want).max()}"
    assert np.mean(got == want) > 0.99  # only values a hair from .5 may round the other way


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_round_trip_is_exact(device, fmt, dtype):
    """tensorize (unscaled) then detensorize with the inverse normalization gives the frame back."""
    img = frame(13, 127, fmt)
    if fmt.has_alpha:
        img[..., 3] = 255  # (a 3-channel tensor carries no alpha: it comes back 255)
    c = 1 if fmt is PF.GRAY8 else 3
    scale = 1.0 if np.dtype(dtype) == np.uint8 else 127.5
    t = empty_tensor(device, (2, c, 13, 127), dtype)
    _gpu.tensorize(device.upload(img), fmt, (0, 0, 127, 13), t, 1, rgb=True, nhwc=False, alpha=[1 / scale] * c,
                   beta=[-1.0 if scale != 1 else 0.0] * c)
    out = empty_tensor(device, img.shape, np.uint8)
    _gpu.detensorize(t, 1, rgb=True, nhwc=False, alpha=[scale] * c, beta=[scale if scale != 1 else 0.0] * c,
                     out=out, pixel_format=fmt)
    np.testing.assert_array_equal(out.numpy(), img)


# -- errors ------------------------------------------------------------------------------------------
def test_tensorize_errors(device):
    img = device.upload(frame(10, 12, PF.BGR8))
    out = empty_tensor(device, (2, 3, 4, 4), np.float32)
    ok = dict(rgb=False, nhwc=False, alpha=[1.0] * 3, beta=[0.0] * 3)

    def bad(match, pixels=img, fmt=PF.BGR8, crop=(0, 0, 12, 10), tensor=out, index=0, **kw):
        with pytest.raises(mlrt.InvalidArgument, match=match):
            _gpu.tensorize(pixels, fmt, crop, tensor, index, **{**ok, **kw})

    bad("device memory", pixels=frame(10, 12, PF.BGR8))
    bad("device memory", tensor=np.zeros((2, 3, 4, 4), np.float32))
    bad("uint8", pixels=device.upload(np.zeros((10, 12, 3), np.float32)))
    bad("uint8", pixels=device.upload(np.zeros((10, 36), np.uint8)))
    bad("BGRA8 has 4 byte", fmt=PF.BGRA8)
    bad("GRAY8 has 1 byte", fmt="gray8")
    bad("NV12", fmt=PF.NV12)
    bad("unknown pixel format code", fmt=9)
    bad("unknown pixel format", fmt="yuv")
    bad("rank 4", tensor=empty_tensor(device, (3, 4, 4), np.float32))
    bad("2 channels", tensor=empty_tensor(device, (1, 2, 4, 4), np.float32))
    bad("5 channels", tensor=empty_tensor(device, (1, 4, 4, 5), np.float32), nhwc=True)
    bad("float64", tensor=empty_tensor(device, (1, 3, 4, 4), np.float64))
    bad("empty", crop=(0, 0, 0, 10))
    bad("empty", crop=(2, 2, 5, -1))
    bad("not inside", crop=(1, 0, 12, 10))
    bad("not inside", crop=(0, 5, 12, 6))
    bad("not inside", crop=(-1, 0, 4, 4))
    bad("crop must be", crop=(0, 0, 4))
    bad("batch index 2", index=2)
    bad("batch index -1", index=-1)
    bad("integer", index=0.5)
    bad("alpha must be 3 numbers", alpha=[1.0, 1.0])
    bad("beta must be 3 numbers", beta=[0.0] * 4)
    small = DeviceTensor(device.allocate(16), np.float32, (2, 3, 4, 4), device)
    bad("smaller than its shape", tensor=small)
    other = Device(device.cl_device)  # the same hardware, another context
    elsewhere = DeviceTensor(other.allocate(2 * 3 * 16 * 4), np.float32, (2, 3, 4, 4), other)
    bad("different OpenCL devices", tensor=elsewhere)


def test_detensorize_errors(device):
    t = empty_tensor(device, (2, 3, 4, 5), np.float32)
    out = empty_tensor(device, (4, 5, 3), np.uint8)
    ok = dict(rgb=False, nhwc=False, alpha=[1.0] * 3, beta=[0.0] * 3)

    def bad(match, tensor=t, index=0, frame_=out, fmt=PF.BGR8, **kw):
        with pytest.raises(mlrt.InvalidArgument, match=match):
            _gpu.detensorize(tensor, index, out=frame_, pixel_format=fmt, **{**ok, **kw})

    bad("4 channels", tensor=empty_tensor(device, (2, 4, 4, 5), np.float32))
    bad("rank 4", tensor=empty_tensor(device, (3, 4, 5), np.float32))
    bad("int32", tensor=empty_tensor(device, (2, 3, 4, 5), np.int32))
    bad("same size", frame_=empty_tensor(device, (5, 4, 3), np.uint8))
    bad("BGRA8 has 4 byte", fmt=PF.BGRA8)
    bad("NV12", fmt=PF.NV12)
    bad("uint8", frame_=empty_tensor(device, (4, 5, 3), np.float32))
    bad("batch index 2", index=2)
    bad("alpha must be 3", alpha=1.0)
    bad("device memory", frame_=np.zeros((4, 5, 3), np.uint8))


# -- CPU and GPU agree -------------------------------------------------------------------------------
def test_cpu_and_gpu_agree(device):
    """HIGHLEVEL.md: the CPU path (C kernel) and the GPU path give the same tensor, within
    ±1 of a 0..255 step."""
    try:
        from mlrt.media import _cpu
    except ImportError as exc:
        pytest.skip(f"the CPU image kernels (mlrt.media._cpu) are not available: {exc}")
    for fmt, c, dtype, nhwc in [(PF.BGR8, 3, np.float32, False), (PF.BGRA8, 4, np.float16, True),
                                (PF.RGB8, 1, np.uint8, False), (PF.GRAY8, 3, np.float32, True)]:
        img = frame(61, 83, fmt)
        crop, hw = (5, 7, 70, 50), (33, 47)
        alpha, beta = norm(c, dtype)
        cpu = np.zeros(shape_of(2, c, hw, nhwc), dtype)
        _cpu.tensorize(img, fmt, crop, cpu, 1, rgb=True, nhwc=nhwc, alpha=alpha, beta=beta)
        gpu = run_tensorize(device, img, fmt, crop, hw, c, True, nhwc, dtype, alpha, beta, n=2, index=1)
        assert_close(image_of(gpu, 1, nhwc), image_of(cpu, 1, nhwc).astype(np.float64), alpha, dtype,
                     f"{fmt.name} -> {c} channels {np.dtype(dtype).name}")
    for fmt, c, dtype, nhwc in [(PF.BGRA8, 3, np.float32, False), (PF.GRAY8, 3, np.float16, True),
                                (PF.RGB8, 1, np.uint8, False)]:
        tensor = rng.uniform(-10, 265, (2, 13, 127, c)).astype(dtype)
        if not nhwc:
            tensor = np.ascontiguousarray(tensor.transpose(0, 3, 1, 2))
        alpha, beta = [1.0, 0.5, 2.0][:c], [0.0, 20.0, -100.0][:c]
        cpu = np.zeros((13, 127, fmt.channels), np.uint8)
        _cpu.detensorize(tensor, 1, rgb=False, nhwc=nhwc, alpha=alpha, beta=beta, out=cpu, pixel_format=fmt)
        gpu = empty_tensor(device, cpu.shape, np.uint8)
        _gpu.detensorize(device.upload(tensor), 1, rgb=False, nhwc=nhwc, alpha=alpha, beta=beta, out=gpu,
                         pixel_format=fmt)
        assert np.abs(gpu.numpy().astype(int) - cpu).max() <= 1, f"detensorize {c} channels -> {fmt.name}"


# -- the OpenCL partition reads the tensor where it is -----------------------------------------------
def test_session_reads_the_device_tensor(device, monkeypatch):
    """A tensorized device tensor fed to a session as an OrtValue runs on the OpenCL
    partition without being read back to the host, and gives what the host-tensorized
    reference input gives."""
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    node = h.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], name="conv")
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 32, 32])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [1, 4, 32, 32])],
                         [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    sess = ml.InferenceSession(model, providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    assert {p for _, _, p in sess.get_node_assignment()} == {"OpenCLExecutionProvider"}

    img = frame(48, 64, PF.BGR8)
    crop, alpha, beta = (8, 0, 48, 48), [1 / 255] * 3, [0.0] * 3
    x = empty_tensor(device, (1, 3, 32, 32), np.float32)
    _gpu.tensorize(device.upload(img), PF.BGR8, crop, x, 0, rgb=True, nhwc=False, alpha=alpha, beta=beta)

    read_back = []
    numpy = DeviceTensor.numpy
    monkeypatch.setattr(DeviceTensor, "numpy", lambda self: (read_back.append(self is x), numpy(self))[1])
    y = sess.run(None, {"x": ml.OrtValue(x)})[0]
    monkeypatch.undo()
    assert not any(read_back), "the session read the input tensor back to the host"

    np.testing.assert_array_equal(y, sess.run(None, {"x": x.numpy()})[0])
    ref = ref_values(img, PF.BGR8, crop, (32, 32), 3, True).transpose(2, 0, 1)[None].astype(np.float32) / 255
    want = sess.run(None, {"x": ref})[0]
    bound = np.abs(w).sum(axis=(1, 2, 3)).max() * STEP / 255  # a conv moves by at most sum|w| * the input's error
    np.testing.assert_allclose(y, want, atol=bound + 1e-5)
