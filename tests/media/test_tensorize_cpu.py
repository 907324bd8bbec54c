"""The CPU image kernels (native/kernels/tensorize.c through media/_cpu.py) against an
independent reference: OpenCV (cv2.cvtColor to BGRA, cv2.resize INTER_LINEAR of the
cropped image) and numpy for luma, channel order, normalization and layout.

Tolerance: cv2.resize of a uint8 image works in fixed point and rounds, so the
tensor may sit up to one 0..255 step from it (HIGHLEVEL.md's "within ±1 of a 0..255
step"), scaled by the channel's alpha, plus float16's rounding; cv2.resize of the
float32 image (the same taps with float weights) checks float32 results tightly.
Where the weights are 0 and 1 (a crop of the output's size) and in the detensorize
round trip the result is exact.
"""

import ctypes
import mmap
import sys
import threading

import numpy as np
import pytest

import mlrt
from mlrt.media import _cpu
from mlrt.media._formats import BitmapPixelFormat as PF
from mlrt.native import _lib

cv2 = pytest.importorskip("cv2", reason="the reference needs OpenCV (opencv-python-headless)")

STEP = 1.0     # allowed distance from cv2's uint8 resize, in steps of the 0..255 scale
FLOAT_TOL = 2e-3  # allowed distance from cv2's float32 resize (0..255 scale): float rounding only
FORMATS = [PF.BGRA8, PF.RGBA8, PF.BGR8, PF.RGB8, PF.GRAY8]
TYPES = [np.float32, np.float16, np.uint8]
TO_BGRA = {PF.RGBA8: cv2.COLOR_RGBA2BGRA, PF.BGR8: cv2.COLOR_BGR2BGRA, PF.RGB8: cv2.COLOR_RGB2BGRA,
           PF.GRAY8: cv2.COLOR_GRAY2BGRA}
LUMA = (0.0722, 0.7152, 0.2126)  # Rec.709 weights of B, G, R
# (frame height, width), crop (x, y, width, height), output (H, W): up and down, odd sizes, edges
GEOMETRIES = [
    ((13, 127), (0, 0, 127, 13), (1, 2)),
    ((1, 1), (0, 0, 1, 1), (13, 13)),
    ((2, 2), (0, 0, 2, 2), (127, 1)),
    ((127, 13), (0, 0, 13, 127), (13, 127)),
    ((2, 127), (0, 0, 127, 2), (127, 2)),       # identity size
    ((40, 60), (0, 0, 60, 40), (20, 30)),       # exactly half (cv2 takes its area path: the same taps)
    ((30, 41), (7, 3, 21, 19), (11, 3)),        # an inner crop
    ((30, 41), (29, 17, 12, 13), (40, 27)),     # a crop at the right and bottom edges, upscaled
    ((9, 9), (4, 4, 1, 1), (2, 13)),            # one pixel
    ((64, 130), (1, 2, 127, 61), (17, 40)),     # wide enough for the vector path and its tail
]

rng = np.random.default_rng(11)


def frame(fmt: PF, h: int, w: int) -> np.ndarray:
    return rng.integers(0, 256, (h, w, fmt.channels), np.uint8)


def to_bgra(pixels: np.ndarray, fmt: PF) -> np.ndarray:
    return pixels if fmt is PF.BGRA8 else cv2.cvtColor(np.ascontiguousarray(pixels), TO_BGRA[fmt])


def reference(pixels, fmt, crop, size, channels, rgb, *, exact_weights=True):
    """The values v (0..255, float64 [H, W, C]) the contract names: the crop scaled
    by cv2.resize INTER_LINEAR, then channels picked (gray: Rec.709 luma).  With
    exact_weights the float32 image is resized (float weights), else the uint8 one."""
    x, y, w, h = crop
    bgra = to_bgra(pixels, fmt)[y:y + h, x:x + w]
    src = bgra.astype(np.float32) if exact_weights else bgra
    planes = cv2.resize(src, (size[1], size[0]), interpolation=cv2.INTER_LINEAR).astype(np.float64)
    planes = planes.reshape(size[0], size[1], 4)
    if channels == 1:
        if fmt is PF.GRAY8:
            return planes[..., :1]
        return (LUMA[0] * planes[..., 0] + LUMA[1] * planes[..., 1] + LUMA[2] * planes[..., 2])[..., None]
    order = [2, 1, 0] if rgb else [0, 1, 2]
    return planes[..., order + [3]][..., :channels]


def store(v: np.ndarray, dtype) -> np.ndarray:
    """What the kernel stores for a float value: uint8 rounds half away from zero and clamps."""
    if np.dtype(dtype) == np.uint8:
        return np.floor(np.clip(v, 0, 255) + 0.5)
    return v


def run(pixels, fmt, crop, size, channels, dtype, *, rgb=False, nhwc=False, alpha=None, beta=None, n=1, index=0,
        out=None):
    alpha = [1.0] * channels if alpha is None else alpha
    beta = [0.0] * channels if beta is None else beta
    shape = (n, size[0], size[1], channels) if nhwc else (n, channels, size[0], size[1])
    if out is None:
        out = np.full(shape, 7, dtype)
    _cpu.tensorize(pixels, fmt, crop, out, index, rgb=rgb, nhwc=nhwc, alpha=alpha, beta=beta)
    return out


def hwc(out, index, nhwc):
    """Image `index` as float64 [H, W, C]."""
    img = out[index] if nhwc else out[index].transpose(1, 2, 0)
    return img.astype(np.float64)


def tolerance(dtype, alpha, expected) -> np.ndarray:
    tol = STEP * np.abs(np.asarray(alpha, np.float64)) + 1e-6
    if np.dtype(dtype) == np.float16:
        tol = tol + np.abs(expected) * 2.0 ** -10
    if np.dtype(dtype) == np.uint8:
        tol = np.ceil(tol - 2e-6)  # values k apart round at most k apart
    return tol


def check(got, pixels, fmt, crop, size, channels, dtype, *, rgb=False, alpha=None, beta=None):
    alpha = np.asarray([1.0] * channels if alpha is None else alpha, np.float64)
    beta = np.asarray([0.0] * channels if beta is None else beta, np.float64)
    v8 = reference(pixels, fmt, crop, size, channels, rgb, exact_weights=False)
    expected8 = store(v8 * alpha + beta, dtype)
    diff = np.abs(got - expected8)
    assert (diff <= tolerance(dtype, alpha, expected8)).all(), f"max distance from cv2 {diff.max()}"
    if np.dtype(dtype) == np.float32:  # tightly against the float resize
        vf = reference(pixels, fmt, crop, size, channels, rgb)
        np.testing.assert_allclose(got, vf * alpha + beta, rtol=1e-5, atol=FLOAT_TOL * np.abs(alpha).max())


# ---- every format, channel count, order, layout and type -----------------------------------------

@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("rgb", [False, True], ids=["bgr", "rgb"])
@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_formats_channels_orders_layouts(fmt, channels, rgb, nhwc, dtype):
    pixels = frame(fmt, 23, 37)
    crop, size = (3, 2, 31, 19), (11, 17)
    out = run(pixels, fmt, crop, size, channels, dtype, rgb=rgb, nhwc=nhwc)
    check(hwc(out, 0, nhwc), pixels, fmt, crop, size, channels, dtype, rgb=rgb)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[1][2]}x{g[1][3]}->{g[2][1]}x{g[2][0]}")
@pytest.mark.parametrize("fmt", [PF.BGR8, PF.BGRA8, PF.GRAY8], ids=lambda f: f.name)
def test_sizes_crops_up_and_down(fmt, geometry):
    (fh, fw), crop, size = geometry
    pixels = frame(fmt, fh, fw)
    for channels, dtype, nhwc in ((3, np.float32, False), (1, np.float32, True), (3, np.uint8, True)):
        out = run(pixels, fmt, crop, size, channels, dtype, rgb=True, nhwc=nhwc)
        check(hwc(out, 0, nhwc), pixels, fmt, crop, size, channels, dtype, rgb=True)


def test_the_benchmark_case():
    """A 1920x1080 BGR8 frame, centre crop, 224x224 float32 NCHW RGB 0..1."""
    pixels = frame(PF.BGR8, 1080, 1920)
    crop, size = (420, 0, 1080, 1080), (224, 224)
    out = run(pixels, PF.BGR8, crop, size, 3, np.float32, rgb=True, alpha=[1 / 255] * 3)
    check(hwc(out, 0, False), pixels, PF.BGR8, crop, size, 3, np.float32, rgb=True, alpha=[1 / 255] * 3)


# ---- exactness ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_identity_size_is_exact(fmt, dtype):
    pixels = frame(fmt, 19, 131)
    crop = (2, 3, 127, 13)
    bgra = to_bgra(pixels, fmt)[3:16, 2:129].astype(np.float64)
    for rgb in (False, True):
        out = run(pixels, fmt, crop, (13, 127), 4, dtype, rgb=rgb, nhwc=True)
        expected = bgra[..., [2, 1, 0, 3]] if rgb else bgra
        np.testing.assert_array_equal(out[0].astype(np.float64), expected)
    if fmt is PF.GRAY8:
        out = run(pixels, fmt, crop, (13, 127), 1, dtype)
        np.testing.assert_array_equal(out[0, 0], pixels[3:16, 2:129, 0])


def test_integer_upscale_keeps_corner_pixels_and_constant_images():
    pixels = np.full((5, 7, 3), 201, np.uint8)
    out = run(pixels, PF.BGR8, (0, 0, 7, 5), (29, 41), 3, np.float32)
    assert (out == 201).all()  # a lerp between equal values is exact
    pixels = frame(PF.BGR8, 4, 4)
    out = run(pixels, PF.BGR8, (0, 0, 4, 4), (16, 16), 3, np.uint8, nhwc=True)
    np.testing.assert_array_equal(out[0, 0, 0], pixels[0, 0])       # clamped at the edges:
    np.testing.assert_array_equal(out[0, -1, -1], pixels[-1, -1])   # corners are source pixels


# ---- batches, strides, normalization --------------------------------------------------------------

@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
def test_batch_index_writes_only_its_image(nhwc):
    pixels = frame(PF.BGRA8, 20, 30)
    out = run(pixels, PF.BGRA8, (0, 0, 30, 20), (9, 13), 3, np.float32, nhwc=nhwc, n=4, index=2)
    for i in (0, 1, 3):
        assert (out[i] == 7).all()
    check(hwc(out, 2, nhwc), pixels, PF.BGRA8, (0, 0, 30, 20), (9, 13), 3, np.float32)
    out = run(pixels, PF.BGRA8, (0, 0, 30, 20), (9, 13), 3, np.float32, nhwc=nhwc, n=4, index=3, out=out)
    np.testing.assert_array_equal(out[3], out[2])
    assert (out[0] == 7).all() and (out[1] == 7).all()


def strided_sources():
    """(name, pixels view, format, the same pixels contiguous)."""
    base = frame(PF.BGRA8, 41, 67)
    padded = np.zeros((41, 80, 3), np.uint8)[:, :67]  # row padding
    padded[...] = base[..., :3]
    yield "row padding", padded, PF.BGR8
    yield "BGR view of BGRA", base[:, :, :3], PF.BGR8
    yield "every other column", base[:, ::2], PF.BGRA8
    yield "every other row, BGR", base[::2, :, :3], PF.BGR8
    yield "transposed", base.transpose(1, 0, 2), PF.BGRA8
    yield "reversed channels", base[:, :, 2::-1], PF.RGB8
    yield "one channel of four", base[:, :, 1:2], PF.GRAY8


@pytest.mark.parametrize("case", list(strided_sources()), ids=lambda c: c[0])
def test_strided_sources_are_read_in_place(case):
    _, pixels, fmt = case
    h, w = pixels.shape[:2]
    for crop, size in (((0, 0, w, h), (h, w)), ((1, 2, w - 1, h - 2), (7, 25)), ((0, 0, w, h), (60, 90))):
        for channels in (1, 3):
            got = run(pixels, fmt, crop, size, channels, np.float32, nhwc=True)
            want = run(np.ascontiguousarray(pixels), fmt, crop, size, channels, np.float32, nhwc=True)
            np.testing.assert_array_equal(got, want)
            check(got[0], pixels, fmt, crop, size, channels, np.float32)


@pytest.fixture
def guarded():
    """A function giving uint8 arrays that end where an unreadable page begins: a read
    past their last byte crashes the test."""
    libc = ctypes.CDLL(None, use_errno=True)
    page = mmap.PAGESIZE
    maps = []

    def make(shape):
        n = int(np.prod(shape))
        pages = -(-n // page)
        m = mmap.mmap(-1, (pages + 1) * page)
        base = np.frombuffer(m, np.uint8)
        guard = base.ctypes.data + pages * page
        assert libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(page), 0) == 0  # PROT_NONE
        maps.append((m, base, guard))
        return base[pages * page - n:pages * page].reshape(shape)

    yield make
    for _, _, guard in maps:  # (the maps are freed with the last array viewing them)
        libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(page), 3)  # PROT_READ | PROT_WRITE


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs mprotect")
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_never_reads_past_the_last_pixel(fmt, guarded):
    pixels = guarded((13, 31, fmt.channels))
    pixels[...] = frame(fmt, 13, 31)
    for crop, size in (((0, 0, 31, 13), (13, 31)), ((20, 5, 11, 8), (40, 97)), ((30, 12, 1, 1), (3, 5))):
        got = run(pixels, fmt, crop, size, 3, np.float32, nhwc=True)
        check(got[0], pixels, fmt, crop, size, 3, np.float32)
    tensor = guarded((1, 13, 31, 3)).view(np.uint8)
    run(pixels, fmt, (0, 0, 31, 13), (13, 31), 3, np.uint8, nhwc=True, out=tensor)
    back = guarded((13, 31, fmt.channels))
    _cpu.detensorize(tensor, 0, rgb=False, nhwc=True, alpha=[1.0] * 3, beta=[0.0] * 3, out=back, pixel_format=fmt)
    if fmt is not PF.GRAY8:
        np.testing.assert_array_equal(back[..., :3], to_bgra(pixels, fmt)[..., fmt_order(fmt)])


def fmt_order(fmt):
    """Positions of a format's colour bytes in BGRA order."""
    return [2, 1, 0] if fmt.is_rgb_order else [0, 1, 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda t: np.dtype(t).name)
def test_mean_std_normalization(dtype):
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])  # R, G, B
    alpha, beta = list(1 / (255 * std)), list(-mean / std)
    pixels = frame(PF.RGB8, 50, 70)
    crop, size = (5, 0, 50, 50), (32, 32)
    out = run(pixels, PF.RGB8, crop, size, 3, dtype, rgb=True, alpha=alpha, beta=beta)
    check(hwc(out, 0, False), pixels, PF.RGB8, crop, size, 3, dtype, rgb=True, alpha=alpha, beta=beta)
    lo, hi = (0 - mean) / std, (1 - mean) / std
    img = out[0].astype(np.float64)
    assert (img >= lo[:, None, None] - 1e-2).all() and (img <= hi[:, None, None] + 1e-2).all()


def test_uint8_output_rounds_half_away_from_zero_and_clamps():
    pixels = np.array([[[0], [1], [2], [3], [100], [255]]], np.uint8)
    out = run(pixels, PF.GRAY8, (0, 0, 6, 1), (1, 6), 1, np.uint8, alpha=[0.5], beta=[0.0])
    np.testing.assert_array_equal(out[0, 0, 0], [0, 1, 1, 2, 50, 128])  # 0.5 -> 1, 1.5 -> 2, 127.5 -> 128
    out = run(pixels, PF.GRAY8, (0, 0, 6, 1), (1, 6), 1, np.uint8, alpha=[2.0], beta=[-3.0])
    np.testing.assert_array_equal(out[0, 0, 0], [0, 0, 1, 3, 197, 255])


def test_frame_to_frame_scaler_keeps_alpha():
    """4-channel uint8 NHWC output scales a BGRA8 frame into another BGRA8 frame."""
    pixels = frame(PF.BGRA8, 48, 64)
    dest = np.zeros((30, 50, 4), np.uint8)
    _cpu.tensorize(pixels, PF.BGRA8, (0, 0, 64, 48), dest[None], 0, rgb=False, nhwc=True, alpha=[1.0] * 4,
                   beta=[0.0] * 4)
    want = cv2.resize(pixels, (50, 30), interpolation=cv2.INTER_LINEAR).astype(np.int32)
    assert np.abs(dest.astype(np.int32) - want).max() <= 1
    same = np.zeros_like(pixels)
    _cpu.tensorize(pixels, PF.BGRA8, (0, 0, 64, 48), same[None], 0, rgb=False, nhwc=True, alpha=[1.0] * 4,
                   beta=[0.0] * 4)
    np.testing.assert_array_equal(same, pixels)
    rgba = np.zeros_like(pixels)  # BGRA8 -> RGBA8: order swapped, alpha kept
    _cpu.tensorize(pixels, PF.BGRA8, (0, 0, 64, 48), rgba[None], 0, rgb=True, nhwc=True, alpha=[1.0] * 4,
                   beta=[0.0] * 4)
    np.testing.assert_array_equal(rgba, pixels[..., [2, 1, 0, 3]])


def test_concurrent_calls_agree():
    pixels = frame(PF.BGR8, 300, 400)
    want = run(pixels, PF.BGR8, (50, 0, 300, 300), (96, 96), 3, np.float32, rgb=True)
    results, errors = [None] * 6, []

    def work(i):
        try:
            for _ in range(20):
                results[i] = run(pixels, PF.BGR8, (50, 0, 300, 300), (96, 96), 3, np.float32, rgb=True)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        np.testing.assert_array_equal(r, want)


# ---- detensorize ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("nhwc", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("rgb", [False, True], ids=["bgr", "rgb"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_round_trip_is_exact(fmt, rgb, nhwc, dtype):
    pixels = frame(fmt, 13, 27)
    if fmt.has_alpha:
        pixels[..., 3] = 255
    channels = 1 if fmt is PF.GRAY8 else 3
    scale = 1.0 if np.dtype(dtype) == np.uint8 else 1 / 255
    tensor = run(pixels, fmt, (0, 0, 27, 13), (13, 27), channels, dtype, rgb=rgb, nhwc=nhwc, n=2, index=1,
                 alpha=[scale] * channels)
    back = np.zeros_like(pixels)
    _cpu.detensorize(tensor, 1, rgb=rgb, nhwc=nhwc, alpha=[1 / scale] * channels, beta=[0.0] * channels, out=back,
                     pixel_format=fmt)
    np.testing.assert_array_equal(back, pixels)


def test_detensorize_converts_rounds_and_clamps():
    t = np.array([[[[-3.0, 0.49, 0.5, 1.5, 254.5, 300.0, np.nan]]]], np.float32)  # [1, 1, 1, 7]
    gray = np.zeros((1, 7, 1), np.uint8)
    _cpu.detensorize(t, 0, rgb=False, nhwc=False, alpha=[1.0], beta=[0.0], out=gray, pixel_format=PF.GRAY8)
    np.testing.assert_array_equal(gray[0, :, 0], [0, 0, 1, 2, 255, 255, 0])
    bgra = np.zeros((1, 7, 4), np.uint8)  # a gray tensor fills every colour, alpha 255
    _cpu.detensorize(t, 0, rgb=False, nhwc=False, alpha=[1.0], beta=[0.0], out=bgra, pixel_format=PF.BGRA8)
    np.testing.assert_array_equal(bgra[0, :, :3], np.repeat(gray[0], 3, axis=1))
    assert (bgra[..., 3] == 255).all()
    # a colour tensor gives a gray frame its luma; channels read as R, G, B with rgb
    rgb_t = rng.uniform(-20, 280, (1, 3, 5, 6)).astype(np.float32)
    out = np.zeros((5, 6, 1), np.uint8)
    _cpu.detensorize(rgb_t, 0, rgb=True, nhwc=False, alpha=[1.0] * 3, beta=[0.0] * 3, out=out, pixel_format=PF.GRAY8)
    r, g, b = np.clip(rgb_t[0].astype(np.float64), 0, 255)
    np.testing.assert_array_equal(out[..., 0], np.floor(0.2126 * r + 0.7152 * g + 0.0722 * b + 0.5))
    bgr = np.zeros((5, 6, 3), np.uint8)
    _cpu.detensorize(rgb_t, 0, rgb=True, nhwc=False, alpha=[1.0] * 3, beta=[0.0] * 3, out=bgr, pixel_format=PF.BGR8)
    np.testing.assert_array_equal(bgr, np.floor(np.stack([b, g, r], -1) + 0.5))


def test_detensorize_undoes_normalization_into_strided_frames():
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    pixels = frame(PF.RGB8, 21, 33)
    tensor = run(pixels, PF.RGB8, (0, 0, 33, 21), (21, 33), 3, np.float32, rgb=True, alpha=list(1 / (255 * std)),
                 beta=list(-mean / std))
    big = np.zeros((21, 40, 4), np.uint8)
    view = big[:, 3:36, 2::-1]  # a BGR frame written as the reversed R, G, B of padded memory
    _cpu.detensorize(tensor, 0, rgb=True, nhwc=False, alpha=list(255 * std), beta=list(255 * mean), out=view,
                     pixel_format=PF.BGR8)
    np.testing.assert_array_equal(big[:, 3:36, :3], pixels)
    assert (big[:, :3] == 0).all() and (big[:, 36:] == 0).all() and (big[..., 3] == 0).all()


# ---- errors ---------------------------------------------------------------------------------------

def bad_tensorize_calls():
    px = frame(PF.BGR8, 10, 20)
    f32 = np.float32
    yield "crop outside", dict(pixels=px, crop=(15, 0, 10, 10))
    yield "crop below", dict(pixels=px, crop=(0, 5, 10, 6))
    yield "negative crop", dict(pixels=px, crop=(-1, 0, 10, 10))
    yield "empty crop", dict(pixels=px, crop=(0, 0, 0, 10))
    yield "crop not integers", dict(pixels=px, crop=(0.5, 0, 10, 10))
    yield "two channels", dict(pixels=px, out=np.full((1, 2, 4, 4), 7, f32))
    yield "five channels", dict(pixels=px, out=np.full((1, 4, 4, 5), 7, f32), nhwc=True)
    yield "batch index too large", dict(pixels=px, index=1)
    yield "negative batch index", dict(pixels=px, index=-1)
    yield "float batch index", dict(pixels=px, index=0.0)
    yield "bytes per pixel", dict(pixels=frame(PF.BGRA8, 10, 20))
    yield "pixels not uint8", dict(pixels=px.astype(np.int16))
    yield "pixels rank 2", dict(pixels=px[..., 0])
    yield "NV12", dict(pixels=px[..., :1], fmt=PF.NV12)
    yield "unknown format", dict(pixels=px, fmt="yuv9")
    yield "alpha per channel", dict(pixels=px, alpha=[1.0, 1.0])
    yield "tensor rank 3", dict(pixels=px, out=np.full((3, 4, 4), 7, f32))
    yield "tensor type", dict(pixels=px, out=np.zeros((1, 3, 4, 4), np.float64))
    yield "tensor not contiguous", dict(pixels=px, out=np.zeros((1, 3, 4, 8), f32)[..., ::2])
    yield "tensor read-only", dict(pixels=px, out=_read_only(np.full((1, 3, 4, 4), 7, f32)))
    yield "pixels not an array", dict(pixels=px.tolist())


def _read_only(a):
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("case", list(bad_tensorize_calls()), ids=lambda c: c[0])
def test_tensorize_refuses_bad_arguments(case):
    _, kw = case
    out = kw.get("out", np.full((1, 3, 4, 4), 7, np.float32))
    fmt = kw.get("fmt", PF.BGR8)
    with pytest.raises(mlrt.InvalidArgument):
        _cpu.tensorize(kw["pixels"], fmt, kw.get("crop", (0, 0, 20, 10)), out, kw.get("index", 0), rgb=False,
                       nhwc=kw.get("nhwc", False), alpha=kw.get("alpha", [1.0] * 3), beta=[0.0] * 3)
    if out.dtype == np.float32 and out.flags.c_contiguous:
        assert (out == 7).all()  # nothing written
    good = np.zeros((1, 3, 4, 4), np.float32)  # and the next call works
    _cpu.tensorize(frame(PF.BGR8, 10, 20), PF.BGR8, (0, 0, 20, 10), good, 0, rgb=False, nhwc=False, alpha=[1.0] * 3,
                   beta=[0.0] * 3)
    assert good.any()


def test_detensorize_refuses_bad_arguments():
    t = np.zeros((2, 3, 4, 5), np.float32)
    frame_ok = np.zeros((4, 5, 3), np.uint8)
    one = dict(rgb=False, nhwc=False, alpha=[1.0] * 3, beta=[0.0] * 3)
    bad = [
        (t, 2, frame_ok, PF.BGR8, one),                                    # batch index
        (t, 0, np.zeros((5, 4, 3), np.uint8), PF.BGR8, one),               # H, W swapped
        (t, 0, np.zeros((4, 6, 3), np.uint8), PF.BGR8, one),               # width
        (t, 0, frame_ok, PF.BGRA8, one),                                   # bytes per pixel
        (t, 0, frame_ok, PF.NV12, one),
        (np.zeros((1, 4, 4, 5), np.float32), 0, frame_ok, PF.BGR8, dict(one, alpha=[1.0] * 4, beta=[0.0] * 4)),
        (np.zeros((1, 2, 4, 5), np.float32), 0, frame_ok, PF.BGR8, dict(one, alpha=[1.0] * 2, beta=[0.0] * 2)),
        (t, 0, frame_ok, PF.BGR8, dict(one, beta=[0.0])),                  # beta per channel
        (t.astype(np.int32), 0, frame_ok, PF.BGR8, one),                   # tensor type
        (t[0], 0, frame_ok, PF.BGR8, one),                                 # tensor rank
        (t, 0, frame_ok.astype(np.float32), PF.BGR8, one),                 # frame type
        (t, 0, _read_only(frame_ok.copy()), PF.BGR8, one),                 # read-only frame
    ]
    for tensor, index, out, fmt, kw in bad:
        with pytest.raises(mlrt.InvalidArgument):
            _cpu.detensorize(tensor, index, out=out, pixel_format=fmt, **kw)
    assert not frame_ok.any()
    t[1] = 9.0
    _cpu.detensorize(t, 1, out=frame_ok, pixel_format=PF.BGR8, **one)
    assert (frame_ok == 9).all()


def test_kernels_check_their_parameter_blocks_without_a_pool():
    ffi, lib = _lib.ffi(), _lib.lib()
    tz = _lib.find_kernel("mlrt.media", "Tensorize", 1, np.uint8)
    assert tz >= 0 and _lib.find_kernel("mlrt.media", "Tensorize", 1, np.float32) < 0
    dt = [_lib.find_kernel("mlrt.media", "Detensorize", 1, t) for t in TYPES]
    assert min(dt) >= 0 and len(set(dt)) == 1
    pixels, out = frame(PF.BGR8, 4, 6), np.zeros((1, 3, 2, 3), np.float32)
    ins, outs = ffi.new("mlrt_tensor[1]"), ffi.new("mlrt_tensor[1]")
    _lib.fill_tensor(ins[0], pixels.dtype, pixels.shape, pixels.strides, _lib.array_pointer(pixels))
    _lib.fill_tensor(outs[0], out.dtype, out.shape, None, _lib.array_pointer(out))
    good = dict(src_format=PF.BGR8.value, crop_width=6, crop_height=4, alpha=[1.0] * 3)

    def status(fields, size_change=0):
        keep, p, size = _lib.pack_params("mlrt_tensorize_params", fields)
        return lib.mlrt_kernel_run(tz, ffi.NULL, ins, 1, outs, 1, p, size + size_change)

    assert status(good, -8) == 1 and b"parameter block" in ffi.string(lib.mlrt_last_error())
    assert status(dict(good, src_format=5)) == 1  # NV12 never reaches a kernel
    assert status(dict(good, nhwc=2)) == 1
    assert status(dict(good, dst_order=-1)) == 1
    assert status(dict(good, crop_x=1)) == 1 and b"crop" in ffi.string(lib.mlrt_last_error())
    assert not out.any()
    assert status(good) == 0  # no pool: runs on the calling thread
    check(out[0].transpose(1, 2, 0), pixels, PF.BGR8, (0, 0, 6, 4), (2, 3), 3, np.float32)
    keep, p, size = _lib.pack_params("mlrt_detensorize_params", dict(dst_format=PF.BGR8.value, alpha=[1.0] * 3))
    assert lib.mlrt_kernel_run(dt[0], ffi.NULL, outs, 1, ins, 1, p, size + 4) == 1  # (the frame is 4 x 6)
    assert b"parameter block" in ffi.string(lib.mlrt_last_error())
