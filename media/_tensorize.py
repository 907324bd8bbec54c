"""Frames -> image tensors and back, by the rules of shared/HIGHLEVEL.md ("Image
tensorization"): the size and crop, the channel order and the value range.  The pixel
work happens in one pass in the C kernels (host tensors) or the device provider's
image kernels (device tensors: _gpu.py); this file decides what they are asked to do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._errors import InvalidArgument
from ..native.providers import owner_of
from . import _cpu
from ._formats import BitmapBounds, BitmapPixelFormat, LearningModelPixelRange
from ._frame import VideoFrame, check_bounds, device_provider, to_host

F = BitmapPixelFormat


@dataclass(frozen=True)
class ImageTarget:
    """What one image input (or output) of a model looks like as a tensor.

    `height`/`width` None are free; `pixel_format` BGR8, RGB8 or GRAY8 gives the
    channel order; values are `pixel / scale - shift` by `pixel_range`, then
    `(value - mean[c]) / std[c]` when mean/std are given (per tensor channel, in its
    order).  `nhwc` lays channels last; `dtype` float32, float16 or uint8."""

    dtype: np.dtype
    channels: int
    height: int | None
    width: int | None
    nhwc: bool = False
    pixel_format: BitmapPixelFormat = F.BGR8
    pixel_range: LearningModelPixelRange = LearningModelPixelRange.ZERO_TO_255
    mean: tuple | None = None
    std: tuple | None = None

    def coefficients(self) -> tuple[tuple, tuple]:
        """(alpha, beta) per tensor channel: tensor value = pixel * alpha + beta."""
        scale, shift = self.pixel_range.scale_shift
        mean = _per_channel(self.mean, self.channels, 0.0, "mean")
        std = _per_channel(self.std, self.channels, 1.0, "std")
        if any(s == 0 for s in std):
            raise InvalidArgument(f"std {std} has a zero")
        return tuple(1.0 / (scale * s) for s in std), tuple((-shift - m) / s for m, s in zip(mean, std))

    def inverse(self) -> tuple[tuple, tuple]:
        """(alpha, beta) per tensor channel: pixel = tensor value * alpha + beta."""
        alpha, beta = self.coefficients()
        return tuple(1.0 / a for a in alpha), tuple(-b / a for a, b in zip(alpha, beta))

    @property
    def rgb(self) -> bool:
        return self.pixel_format is F.RGB8


def _per_channel(values, channels: int, default: float, what: str) -> tuple:
    if values is None:
        return (default,) * channels
    v = tuple(float(x) for x in np.ravel(values))
    if len(v) == 1:
        return v * channels
    if len(v) != channels:
        raise InvalidArgument(f"{what} has {len(v)} values for a {channels}-channel image")
    return v


def centred_crop(bounds: BitmapBounds, width: int, height: int) -> BitmapBounds:
    """The largest rectangle centred in `bounds` with the aspect ratio width:height."""
    bw, bh = bounds.width, bounds.height
    if bw * height > bh * width:  # wider than the target: full height
        w = max(1, min(bw, round(bh * width / height)))
        return BitmapBounds(bounds.x + (bw - w) // 2, bounds.y, w, bh)
    h = max(1, min(bh, round(bw * height / width)))
    return BitmapBounds(bounds.x, bounds.y + (bh - h) // 2, bw, h)


def target_size(target: ImageTarget, region: BitmapBounds) -> tuple[int, int]:
    """(height, width) of the tensor image for a frame region: the model's; a free one
    keeps the region's aspect ratio against the fixed one; both free, the region's."""
    h, w = target.height, target.width
    if h is None and w is None:
        return region.height, region.width
    if h is None:
        return max(1, round(region.height * w / region.width)), w
    if w is None:
        return h, max(1, round(region.width * h / region.height))
    return h, w


def plan(frames: list[VideoFrame], target: ImageTarget, bounds: list | None) -> tuple[tuple[int, int], list]:
    """The tensor image size and each frame's source rectangle: the given bounds scaled
    whole, else the frame's centred crop with the tensor's aspect ratio."""
    regions = [check_bounds(f, b, "bitmap_bounds") for f, b in zip(frames, bounds or [None] * len(frames))]
    sizes = {target_size(target, r) for r in regions}
    if len(sizes) > 1:
        raise InvalidArgument(f"the frames of a batch give tensor images of different sizes {sorted(sizes)}: the "
                              "model leaves height or width free, so the frames (or their bounds) must agree")
    (h, w), = sizes
    if bounds is None:
        regions = [centred_crop(r, w, h) for r in regions]
    return (h, w), regions


def tensor_shape(target: ImageTarget, n: int, h: int, w: int) -> tuple:
    return (n, h, w, target.channels) if target.nhwc else (n, target.channels, h, w)


def tensorize(frames: list[VideoFrame], target: ImageTarget, bounds: list | None = None, *, gpu: bool = False,
              device: str | None = None, out=None, pool=None) -> tuple[object, list[BitmapBounds]]:
    """Frames -> one tensor (a numpy array, or a value of the GPU provider's memory when
    `gpu`, of the device kind `device`'s when given; "cpu": the host), and the
    rectangle of each frame that was used (its applied bounds).  `out` (an array or
    device value of the right shape and type) is written instead of a new tensor where
    the device can (the tensor returned is the one written); `pool` is the native
    thread pool the C kernels run on (a session's)."""
    (h, w), regions = plan(frames, target, bounds)
    shape = tensor_shape(target, len(frames), h, w)
    alpha, beta = target.coefficients()
    if (gpu or device) and device != "cpu":
        from . import _gpu  # (a device's machinery on first use)
        provider = device_provider(device)
        if out is None:
            out = provider.allocate(shape, target.dtype)
        for i, (frame, region) in enumerate(zip(frames, regions)):
            fmt, pixels = frame.packed()
            if not provider.owns(pixels):
                pixels = provider.to_device(np.ascontiguousarray(to_host(pixels)))
            out = _gpu.tensorize(pixels, fmt, tuple(region), out, i, rgb=target.rgb, nhwc=target.nhwc, alpha=alpha,
                                 beta=beta, pool=pool)
        return out, regions
    if out is None:
        out = np.empty(shape, target.dtype)
    for i, (frame, region) in enumerate(zip(frames, regions)):
        fmt, pixels = frame.packed()
        pixels = to_host(pixels)
        _cpu.tensorize(pixels, fmt, tuple(region), out, i, rgb=target.rgb, nhwc=target.nhwc, alpha=alpha, beta=beta,
                       pool=pool)
    return out, regions


def detensorize(tensor, index: int, target: ImageTarget, frame: VideoFrame, pool=None) -> None:
    """Image `index` of an image-shaped tensor (array or device value) into `frame`:
    pixel = (value + shift) * scale (mean/std undone first), rounded and clamped,
    alpha 255.  A frame of another size gets the image scaled onto it."""
    shape = tuple(tensor.shape)
    h, w = (shape[1], shape[2]) if target.nhwc else (shape[2], shape[3])
    alpha, beta = target.inverse()
    fmt = frame.pixel_format
    if fmt is F.NV12:
        raise InvalidArgument("an output cannot be written into an NV12 frame; bind a BGRA8 (or other packed) frame")
    same = (frame.width, frame.height) == (w, h)
    device = owner_of(tensor)
    kind = "cpu" if device is None else device.device
    if same and frame.device == kind:
        dest = frame
    else:  # made where the tensor is, then copied (scaled, moved) into the frame
        dest = VideoFrame.empty(w, h, fmt, device=kind)
    if device is not None:
        from . import _gpu
        dest._pixels = _gpu.detensorize(tensor, index, rgb=target.rgb, nhwc=target.nhwc, alpha=alpha, beta=beta,
                                        out=dest._pixels, pixel_format=fmt, pool=pool)
    else:
        _cpu.detensorize(tensor, index, rgb=target.rgb, nhwc=target.nhwc, alpha=alpha, beta=beta,
                         out=dest._pixels, pixel_format=fmt, pool=pool)
    if dest is not frame:
        dest.copy_to(frame)
