"""Tensorize and detensorize in a device's memory: the arguments checked here (as
_cpu.py's are for host arrays), the pixel work done by the device's provider
(`image_kernel`, native/providers/_base.py: the OpenCL provider runs
native/opencl/tensorize.cl; a provider without image kernels runs the C kernels on
host copies).  Both return the value that holds the result: `out` itself, or a new
value in the same memory when the provider cannot write into `out`.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from .._errors import InvalidArgument
from ..native.providers import owner_of
from . import _cpu
from ._formats import BitmapPixelFormat, batch_index, kernel_format, per_channel

__all__ = ["tensorize", "detensorize"]

TENSOR_TYPES = {np.dtype(t): np.dtype(t).name for t in (np.float32, np.float16, np.uint8)}


def tensorize(pixels, pixel_format, crop, out, index: int, *, rgb: bool, nhwc: bool, alpha, beta, pool=None):
    """Write image `index` of `out` (float32/float16/uint8 [N, C, H, W], or [N, H, W, C]
    with nhwc; C 1, 3 or 4) from the rectangle `crop` (x, y, width, height) of `pixels`
    (uint8 [height, width, bytes per pixel] in `pixel_format`), both in one device's
    memory: scaled to H x W, channels B, G, R (R, G, B with rgb) or gray, each written
    as v * alpha[c] + beta[c].  `pool`: the thread pool of a host fallback."""
    provider = _same_memory(pixels, "pixels", out, "out")
    fmt = kernel_format(pixel_format)
    height, width = _pixels(pixels, fmt, "pixels")
    n, c, h, w = _tensor(out, nhwc, (1, 3, 4), "out")
    args = dict(pixel_format=fmt.value, crop=_crop(crop, width, height), index=_index(index, n), rgb=bool(rgb),
                nhwc=bool(nhwc), alpha=per_channel(alpha, c, "alpha"), beta=per_channel(beta, c, "beta"))
    return provider.image_kernel("tensorize", pixels, out, functools.partial(_cpu.tensorize, pool=pool), **args)


def detensorize(tensor, index: int, *, rgb: bool, nhwc: bool, alpha, beta, out, pixel_format, pool=None):
    """Write the frame `out` (uint8 [H, W, bytes per pixel] in `pixel_format`) from image
    `index` of `tensor` (float32/float16/uint8 [N, C, H, W], or [N, H, W, C] with nhwc;
    C 1 or 3, channels B, G, R or R, G, B with rgb), both in one device's memory:
    round(v * alpha[c] + beta[c]) clamped to 0..255, gray filling every colour, colour
    giving gray its Rec.709 luma, alpha 255."""
    provider = _same_memory(tensor, "tensor", out, "out")
    fmt = kernel_format(pixel_format)
    n, c, h, w = _tensor(tensor, nhwc, (1, 3), "tensor")
    index = _index(index, n)
    height, width = _pixels(out, fmt, "out")
    if (height, width) != (h, w):
        raise InvalidArgument(f"detensorize: the frame is {height} x {width} pixels, the tensor's images are "
                              f"{h} x {w} (H x W): they must be the same size")
    args = dict(pixel_format=fmt.value, index=index, rgb=bool(rgb), nhwc=bool(nhwc),
                alpha=per_channel(alpha, c, "alpha"), beta=per_channel(beta, c, "beta"))
    return provider.image_kernel("detensorize", tensor, out, functools.partial(_cpu.detensorize, pool=pool), **args)


# -- checks ------------------------------------------------------------------------------------------
def _same_memory(src, src_name: str, out, out_name: str):
    """The device provider holding both values."""
    providers = []
    for t, what in ((src, src_name), (out, out_name)):
        p = owner_of(t)
        if p is None:
            raise InvalidArgument(f"{what} must be a tensor in device memory (a device provider's), got "
                                  f"{type(t).__name__}")
        providers.append(p)
    if providers[0] is not providers[1]:
        raise InvalidArgument(f"{src_name} is in {providers[0].device} memory, {out_name} in {providers[1].device}'s")
    return providers[0]


def _pixels(t, fmt: BitmapPixelFormat, what: str) -> tuple[int, int]:
    """(height, width) of a uint8 [height, width, bytes per pixel] frame in fmt."""
    if t.dtype != np.uint8 or len(t.shape) != 3:
        raise InvalidArgument(f"{what} must be uint8 [height, width, bytes per pixel], got {t.dtype.name}"
                              f"{list(t.shape)}")
    if t.shape[2] != fmt.channels:
        raise InvalidArgument(f"{what}: {fmt.name} has {fmt.channels} byte(s) per pixel, the frame has "
                              f"{t.shape[2]} ({t.dtype.name}{list(t.shape)})")
    return t.shape[0], t.shape[1]


def _tensor(t, nhwc: bool, channels: tuple, what: str) -> tuple:
    """(N, C, H, W) of a rank-4 image tensor."""
    if t.dtype not in TENSOR_TYPES:
        raise InvalidArgument(f"{what}: image tensors are {', '.join(TENSOR_TYPES.values())}, not {t.dtype.name}")
    if len(t.shape) != 4:
        raise InvalidArgument(f"{what} must be rank 4 ({'NHWC' if nhwc else 'NCHW'}), got shape {list(t.shape)}")
    n, c, h, w = (t.shape[0], t.shape[3], t.shape[1], t.shape[2]) if nhwc else t.shape
    if c not in channels:
        raise InvalidArgument(f"{what}: {c} channels ({'NHWC' if nhwc else 'NCHW'} shape {list(t.shape)}); "
                              f"images have {' or '.join(map(str, channels))}")
    return n, c, h, w


def _index(index, n: int) -> int:
    index = batch_index(index)
    if not 0 <= index < n:
        raise InvalidArgument(f"batch index {index} is outside the tensor's batch of {n}")
    return index


def _crop(crop, width: int, height: int) -> tuple[int, int, int, int]:
    try:
        x, y, cw, ch = (operator.index(v) for v in crop)
    except (TypeError, ValueError):
        raise InvalidArgument(f"crop must be (x, y, width, height) integers, got {crop!r}") from None
    if cw <= 0 or ch <= 0:
        raise InvalidArgument(f"crop ({x}, {y}, {cw}, {ch}) is empty")
    if x < 0 or y < 0 or x + cw > width or y + ch > height:
        raise InvalidArgument(f"crop ({x}, {y}, {cw}, {ch}) (x, y, width, height) is not inside the "
                              f"{width} x {height} frame")
    return x, y, cw, ch
