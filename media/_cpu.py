"""Tensorize and detensorize on the CPU (native/kernels/tensorize.c): a frame's pixels
cropped, resized, colour-converted and normalized straight into one image of a numpy
tensor batch, and back.

Same meaning as a device's image kernels (media/_gpu.py).  The C kernels check every size,
stride, crop and index themselves; here only what they cannot see is checked (that
the arguments are numpy arrays, one alpha and beta per channel).  Arrays are passed
with their strides, never copied.  The kernels run on one native thread pool shared
by every call (a call that finds it busy runs on its own thread).
"""

from __future__ import annotations

import operator
import os
import threading

import numpy as np

from .._errors import InvalidArgument, NotImplemented
from ._formats import batch_index, kernel_format, per_channel

TENSOR_TYPES = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.uint8))

_native = None  # (ffi, lib, Tensorize kernel, Detensorize kernel, pool), made on first use
_native_lock = threading.Lock()
_lib = None  # mlrt.native (its library names), reached by the first _load(), not with mlrt.media


def _load():
    global _native, _lib
    with _native_lock:
        if _native is None:
            from .. import native as native_lib  # (its library names load the library when first asked for)
            _lib = native_lib
            kernels = []
            for op, dtype in (("Tensorize", np.uint8), ("Detensorize", np.float32)):
                k = _lib.find_kernel("mlrt.media", op, 1, dtype)
                if k < 0:
                    raise NotImplemented(f"the native runtime has no mlrt.media {op} kernel (an older runtime? "
                                         "rebuild it with `python native/_build.py`)")
                kernels.append(k)
            pool = _lib.ThreadPool(os.cpu_count() or 1)
            _native = (_lib.ffi(), _lib.lib(), kernels[0], kernels[1], pool)
    return _native


def _array(a, what: str) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise InvalidArgument(f"{what} must be a numpy array, got {type(a).__name__}")
    return a


def _element_strides(a: np.ndarray, what: str) -> tuple:
    size = a.itemsize
    if any(s % size for s in a.strides):
        raise InvalidArgument(f"{what}: strides {a.strides} are not whole {a.dtype.name} elements")
    return tuple(s // size for s in a.strides) if size != 1 else a.strides


def _channels(a: np.ndarray, nhwc: bool, allowed: tuple, what: str) -> int:
    if a.ndim != 4:
        raise InvalidArgument(f"{what} must be rank 4 ({'NHWC' if nhwc else 'NCHW'}), got shape {list(a.shape)}")
    if a.dtype not in TENSOR_TYPES:
        raise InvalidArgument(f"{what}: image tensors are float32, float16 or uint8, not {a.dtype.name}")
    c = a.shape[3] if nhwc else a.shape[1]
    if c not in allowed:
        raise InvalidArgument(f"{what}: {c} channels ({'NHWC' if nhwc else 'NCHW'} shape {list(a.shape)}); "
                              f"images have {' or '.join(map(str, allowed))}")
    return c


_local = threading.local()  # this thread's descriptors: (slot, dtype, shape, strides) -> mlrt_tensor[1]
_params: dict = {}  # (struct, field values) -> packed block; C only reads them, so threads share them
_CACHE_SIZE = 64


def _descriptor(ffi, slot: str, a: np.ndarray, strides):
    """This thread's mlrt_tensor[1] for an array of a's type, shape and (element)
    strides, pointing at a's data (filled once per layout, then only repointed)."""
    cache = getattr(_local, "descriptors", None)
    if cache is None:
        cache = _local.descriptors = {}
    key = (slot, a.dtype, a.shape, strides)
    d = cache.get(key)
    if d is None:
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        d = ffi.new("mlrt_tensor[1]")
        _lib.fill_tensor(d[0], a.dtype, a.shape, strides)
        cache[key] = d
    d[0].data = ffi.cast("void *", a.ctypes.data)
    return d


def _packed(struct: str, names: tuple, values: tuple):
    key = (struct, values)
    p = _params.get(key)
    if p is None:
        if len(_params) >= _CACHE_SIZE:
            _params.clear()
        p = _params[key] = _lib.pack_params(struct, dict(zip(names, values)))
    return p


def _run(native, kernel: int, x: np.ndarray, x_strides, y: np.ndarray, y_strides, struct: str, names: tuple,
         values: tuple, what: str, pool) -> None:
    ffi, lib, pool = native[0], native[1], pool or native[4]
    try:
        ins, outs = _descriptor(ffi, "in", x, x_strides), _descriptor(ffi, "out", y, y_strides)
        _, pptr, psize = _packed(struct, names, values)
    except OverflowError as exc:
        raise InvalidArgument(f"{what}: a size or position is out of range ({exc})") from None
    _lib.raise_status(lib.mlrt_kernel_run(kernel, pool.handle, ins, 1, outs, 1, pptr, psize))


_TENSORIZE_FIELDS = ("src_format", "crop_x", "crop_y", "crop_width", "crop_height", "dst_order", "nhwc",
                     "batch_index", "alpha", "beta")
_DETENSORIZE_FIELDS = ("dst_format", "src_order", "nhwc", "batch_index", "alpha", "beta")


def tensorize(pixels: np.ndarray, pixel_format, crop, out: np.ndarray, index: int, *, rgb: bool, nhwc: bool,
              alpha, beta, pool=None) -> None:
    """Write image `index` of `out` (float32/float16/uint8 [N, C, H, W], or [N, H, W, C]
    with nhwc; C 1, 3 or 4; contiguous) from the rectangle `crop` (x, y, width, height)
    of `pixels` (uint8 [height, width, bytes per pixel] in `pixel_format`, any strides):
    bilinearly scaled to H x W, channels B, G, R (R, G, B with rgb, then alpha) or the
    gray luma, each written as v * alpha[c] + beta[c]."""
    native = _native or _load()
    fmt = kernel_format(pixel_format).value
    _array(pixels, "pixels")
    c = _channels(_array(out, "out"), nhwc, (1, 3, 4), "out")
    if pixels.dtype != np.uint8:
        raise InvalidArgument(f"pixels must be uint8 [height, width, bytes per pixel], got {pixels.dtype.name}")
    try:
        x0, y0, cw, ch = (operator.index(v) for v in crop)
    except (TypeError, ValueError):
        raise InvalidArgument(f"crop must be (x, y, width, height) integers, got {crop!r}") from None
    if not out.flags.writeable:
        raise InvalidArgument("out is read-only")
    values = (fmt, x0, y0, cw, ch, 1 if rgb else 0, 1 if nhwc else 0, batch_index(index),
              per_channel(alpha, c, "alpha"), per_channel(beta, c, "beta"))
    out_strides = None if out.flags.c_contiguous else _element_strides(out, "out")
    _run(native, native[2], pixels, pixels.strides, out, out_strides, "mlrt_tensorize_params", _TENSORIZE_FIELDS,
         values, "tensorize", pool)


def detensorize(tensor: np.ndarray, index: int, *, rgb: bool, nhwc: bool, alpha, beta, out: np.ndarray,
                pixel_format, pool=None) -> None:
    """Write the frame `out` (uint8 [H, W, bytes per pixel] in `pixel_format`, any
    strides) from image `index` of `tensor` (float32/float16/uint8 [N, C, H, W], or
    [N, H, W, C] with nhwc; C 1 or 3, channels B, G, R or R, G, B with rgb):
    round(v * alpha[c] + beta[c]) clamped to 0..255, gray filling every colour, colour
    giving gray its Rec.709 luma, alpha 255."""
    native = _native or _load()
    fmt = kernel_format(pixel_format).value
    c = _channels(_array(tensor, "tensor"), nhwc, (1, 3), "tensor")
    if _array(out, "out").dtype != np.uint8:
        raise InvalidArgument(f"out must be uint8 [height, width, bytes per pixel], got {out.dtype.name}")
    if not out.flags.writeable:
        raise InvalidArgument("out is read-only")
    values = (fmt, 1 if rgb else 0, 1 if nhwc else 0, batch_index(index), per_channel(alpha, c, "alpha"),
              per_channel(beta, c, "beta"))
    _run(native, native[3], tensor, _element_strides(tensor, "tensor"), out, out.strides, "mlrt_detensorize_params",
         _DETENSORIZE_FIELDS, values, "detensorize", pool)
