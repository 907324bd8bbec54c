"""VideoFrame: made from files (EXIF orientation applied), PIL images, numpy arrays
in every pixel format and empty; read back as numpy and PIL; scaled copies
(copy_to); on the CPU and the GPU."""

import cv2
import numpy as np
import pytest
from PIL import Image

import mlrt
from mlrt.media import BitmapBounds, BitmapPixelFormat as PF, VideoFrame


def picture(h=12, w=20, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_from_numpy_formats_and_guess():
    rgb = picture()
    for fmt, arr in ((PF.RGB8, rgb), (PF.BGR8, rgb[:, :, ::-1]), (PF.RGBA8, np.dstack([rgb, rgb[:, :, :1]])),
                     (PF.BGRA8, np.dstack([rgb[:, :, ::-1], rgb[:, :, :1]])), (PF.GRAY8, rgb[:, :, 0])):
        f = VideoFrame.from_numpy(arr, fmt)
        assert (f.width, f.height, f.pixel_format, f.is_gpu) == (20, 12, fmt, False)
        np.testing.assert_array_equal(f.to_numpy(), arr)
        back = np.asarray(f.to_pil().convert("RGB"))
        np.testing.assert_array_equal(back, rgb if fmt is not PF.GRAY8 else np.dstack([rgb[:, :, 0]] * 3))
    assert VideoFrame.from_numpy(rgb).pixel_format is PF.BGR8  # OpenCV's convention
    assert VideoFrame.from_numpy(rgb[:, :, 0]).pixel_format is PF.GRAY8
    assert VideoFrame.from_numpy(np.zeros((2, 2, 4), np.uint8)).pixel_format is PF.BGRA8
    assert VideoFrame.from_numpy(rgb, "rgb8").pixel_format is PF.RGB8


def test_from_numpy_errors():
    with pytest.raises(mlrt.InvalidArgument, match="uint8"):
        VideoFrame.from_numpy(np.zeros((4, 4, 3), np.float32))
    with pytest.raises(mlrt.InvalidArgument, match=r"BGRA8 pixels are \[height, width, 4\]"):
        VideoFrame.from_numpy(np.zeros((4, 4, 3), np.uint8), PF.BGRA8)
    with pytest.raises(mlrt.InvalidArgument, match="unknown pixel format"):
        VideoFrame.from_numpy(np.zeros((4, 4, 3), np.uint8), "YUV9")
    with pytest.raises(mlrt.InvalidArgument, match="NV12"):
        VideoFrame.from_numpy(np.zeros((5, 4), np.uint8), PF.NV12)


def test_nv12_converts_like_opencv():
    bgr = picture(16, 24, 1)
    yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420)  # planar; NV12 interleaves U and V
    h, w = 16, 24
    y, u, v = yuv[:h], yuv[h:h + h // 4].reshape(-1), yuv[h + h // 4:].reshape(-1)
    nv12 = np.concatenate([y, np.stack([u, v], 1).reshape(h // 2, w)])
    f = VideoFrame.from_numpy(nv12, PF.NV12)
    assert (f.width, f.height) == (24, 16)
    want = cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12)
    np.testing.assert_array_equal(np.asarray(f.to_pil().convert("RGB")), want)
    dst = VideoFrame.empty(24, 16, PF.RGB8)
    f.copy_to(dst)
    assert np.abs(dst.to_numpy().astype(int) - want).max() <= 1


def test_from_file_applies_exif_orientation(tmp_path):
    rgb = picture(10, 30, 2)
    img = Image.fromarray(rgb)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    img.save(tmp_path / "r.jpg", exif=exif, quality=100)
    f = VideoFrame.from_file(tmp_path / "r.jpg")
    assert (f.width, f.height, f.pixel_format) == (10, 30, PF.RGB8)
    Image.fromarray(rgb).save(tmp_path / "p.png")
    np.testing.assert_array_equal(VideoFrame.from_file(tmp_path / "p.png").to_numpy(), rgb)
    Image.fromarray(rgb[:, :, 0]).save(tmp_path / "g.png")
    assert VideoFrame.from_file(tmp_path / "g.png").pixel_format is PF.GRAY8
    Image.fromarray(rgb).convert("P").save(tmp_path / "pal.png")
    assert VideoFrame.from_file(tmp_path / "pal.png").pixel_format is PF.RGB8  # palettes decode to RGB
    with pytest.raises(mlrt.InvalidArgument, match="does not exist"):
        VideoFrame.from_file(tmp_path / "none.png")
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(mlrt.InvalidArgument, match="not a readable image"):
        VideoFrame.from_file(tmp_path / "bad.png")
    with pytest.raises(mlrt.InvalidArgument, match="PIL image"):
        VideoFrame.from_pil(rgb)


def test_empty_and_copy():
    f = VideoFrame.empty(5, 3, PF.GRAY8)
    assert f.to_numpy().shape == (3, 5) and not f.to_numpy().any()
    with pytest.raises(mlrt.InvalidArgument, match="width must be an int >= 1"):
        VideoFrame.empty(0, 3)
    g = VideoFrame.from_numpy(picture())
    c = g.copy()
    c.to_numpy()[...] = 0
    assert g.to_numpy().any()


def test_copy_to_scales_converts_and_keeps_outside_pixels():
    bgr = picture(40, 60, 3)
    src = VideoFrame.from_numpy(bgr, PF.BGR8)
    dst = VideoFrame.from_numpy(np.full((30, 30, 4), 7, np.uint8), PF.RGBA8)
    src.copy_to(dst, source_bounds=BitmapBounds(10, 0, 40, 40), destination_bounds=BitmapBounds(5, 5, 20, 20))
    out = dst.to_numpy()
    want = cv2.cvtColor(cv2.resize(bgr[0:40, 10:50], (20, 20), interpolation=cv2.INTER_LINEAR), cv2.COLOR_BGR2RGB)
    assert np.abs(out[5:25, 5:25, :3].astype(int) - want).max() <= 1
    assert (out[5:25, 5:25, 3] == 255).all()
    outside = np.ones((30, 30), bool)
    outside[5:25, 5:25] = False
    assert (out[outside] == 7).all()
    whole = VideoFrame.empty(60, 40, PF.BGR8)
    src.copy_to(whole)
    np.testing.assert_array_equal(whole.to_numpy(), bgr)  # same size: exact
    own = VideoFrame.from_numpy(bgr.copy(), PF.BGR8)  # onto itself: the source is read before it is written
    own.copy_to(own, source_bounds=(0, 0, 30, 20), destination_bounds=(0, 0, 60, 40))
    want = cv2.resize(bgr[0:20, 0:30], (60, 40), interpolation=cv2.INTER_LINEAR)
    assert np.abs(own.to_numpy().astype(int) - want).max() <= 1
    with pytest.raises(mlrt.InvalidArgument, match="inside the 60x40 frame"):
        src.copy_to(whole, source_bounds=(50, 0, 20, 10))
    with pytest.raises(mlrt.InvalidArgument, match="expected a VideoFrame"):
        src.copy_to(bgr)


def test_gpu_frames_round_trip_and_copy():
    try:
        g = VideoFrame.from_numpy(picture(9, 13, 4), PF.RGB8).to_gpu()
    except mlrt.DeviceError as exc:
        pytest.skip(f"no usable OpenCL device: {exc}")
    assert g.is_gpu and (g.width, g.height) == (13, 9) and "GPU" in repr(g)
    np.testing.assert_array_equal(g.to_numpy(), picture(9, 13, 4))
    np.testing.assert_array_equal(g.to_cpu().to_numpy(), picture(9, 13, 4))
    dst = VideoFrame.empty(13, 9, PF.BGRA8, gpu=True)
    g.copy_to(dst)
    np.testing.assert_array_equal(dst.to_numpy()[:, :, :3], picture(9, 13, 4)[:, :, ::-1])
    part = VideoFrame.empty(26, 18, PF.BGR8, gpu=True)
    g.copy_to(part, destination_bounds=(0, 0, 13, 9))
    np.testing.assert_array_equal(part.to_numpy()[:9, :13], picture(9, 13, 4)[:, :, ::-1])
    assert not part.to_numpy()[9:].any()
    assert g.copy().to_numpy().tolist() == g.to_numpy().tolist()
