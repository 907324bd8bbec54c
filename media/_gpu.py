"""Tensorize and detensorize on the OpenCL device (native/opencl/tensorize.cl): a frame
uploaded once is cropped, resized, colour-converted and normalized straight into the
device tensor the OpenCL partition reads, and back.

Same meaning as the C kernels (native/kernels/tensorize.h, media/_cpu.py); everything
is checked here, so the kernels trust their arguments.  The parameter block travels as
a kernel argument (a struct by value): a call copies nothing to the device but the
launch itself, which is enqueued on the device's in-order queue and not waited for.
"""

from __future__ import annotations

import math
import operator
import threading

import numpy as np

from .._errors import DeviceError, InvalidArgument
from ..native.opencl._runtime import DeviceTensor, cl, round_up
from ._formats import BitmapPixelFormat, batch_index, kernel_format, per_channel

LOCAL = 256       # work-group size (globals are rounded up to it)
CPU_CHUNK = 64    # pixels of a row one item handles on a CPU device (1 on GPUs)
TENSOR_TYPES = {np.dtype(t): np.dtype(t).name for t in (np.float32, np.float16, np.uint8)}

# native/kernels/tensorize.h, field for field
_F8, _F4 = np.dtype("<i8"), np.dtype("<f4")
TENSORIZE_PARAMS = np.dtype([(n, _F8) for n in ("src_format", "crop_x", "crop_y", "crop_width", "crop_height",
                                                "dst_order", "nhwc", "batch_index")]
                            + [("alpha", _F4, (4,)), ("beta", _F4, (4,))])
DETENSORIZE_PARAMS = np.dtype([(n, _F8) for n in ("dst_format", "src_order", "nhwc", "batch_index")]
                              + [("alpha", _F4, (4,)), ("beta", _F4, (4,))])
# the kernels' arguments after the two buffers (tensorize.cl); typed, so pyopencl packs them without probing
_ARGS = {"mlrt_tensorize": [TENSORIZE_PARAMS] + [np.int64] * 5,
         "mlrt_detensorize": [DETENSORIZE_PARAMS] + [np.int64] * 4}

_kernels: dict = {}  # (device, dtype, kernel name) -> (kernel, local size, lock): kernels keep their arguments
_kernels_lock = threading.Lock()


def tensorize(pixels: DeviceTensor, pixel_format, crop, out: DeviceTensor, index: int, *, rgb: bool, nhwc: bool,
              alpha, beta) -> None:
    """Write image `index` of `out` (float32/float16/uint8 [N, C, H, W], or [N, H, W, C]
    with nhwc; C 1, 3 or 4) from the rectangle `crop` (x, y, width, height) of `pixels`
    (uint8 [height, width, bytes per pixel] in `pixel_format`): scaled to H x W,
    channels B, G, R (R, G, B with rgb) or gray, each written as v * alpha[c] + beta[c]."""
    fmt = kernel_format(pixel_format)
    height, width = _pixels(pixels, fmt, "pixels")
    n, c, h, w = _tensor(out, nhwc, (1, 3, 4), "out")
    index = _index(index, n)
    x0, y0, cw, ch = _crop(crop, width, height)
    _same_device(pixels, out)
    p = np.array((fmt.value, x0, y0, cw, ch, bool(rgb), bool(nhwc), index, _per_channel(alpha, c, "alpha"),
                  _per_channel(beta, c, "beta")), TENSORIZE_PARAMS)
    if h and w:
        _enqueue(out, "mlrt_tensorize", h, w, pixels.buffer, out.buffer, p, width, c)


def detensorize(tensor: DeviceTensor, index: int, *, rgb: bool, nhwc: bool, alpha, beta, out: DeviceTensor,
                pixel_format) -> None:
    """Write the frame `out` (uint8 [H, W, bytes per pixel] in `pixel_format`) from image
    `index` of `tensor` (float32/float16/uint8 [N, C, H, W], or [N, H, W, C] with nhwc;
    C 1 or 3, channels B, G, R or R, G, B with rgb): round(v * alpha[c] + beta[c])
    clamped to 0..255, gray filling every colour, colour giving gray its Rec.709 luma,
    alpha 255."""
    fmt = kernel_format(pixel_format)
    n, c, h, w = _tensor(tensor, nhwc, (1, 3), "tensor")
    index = _index(index, n)
    height, width = _pixels(out, fmt, "out")
    if (height, width) != (h, w):
        raise InvalidArgument(f"detensorize: the frame is {height} x {width} pixels, the tensor's images are "
                              f"{h} x {w} (H x W): they must be the same size")
    _same_device(tensor, out)
    p = np.array((fmt.value, bool(rgb), bool(nhwc), index, _per_channel(alpha, c, "alpha"),
                  _per_channel(beta, c, "beta")), DETENSORIZE_PARAMS)
    if h and w:
        _enqueue(tensor, "mlrt_detensorize", h, w, tensor.buffer, out.buffer, p, c)


# -- checks ------------------------------------------------------------------------------------------
def _device_tensor(t, what: str) -> DeviceTensor:
    if not isinstance(t, DeviceTensor):
        raise InvalidArgument(f"{what} must be an OpenCL DeviceTensor, got {type(t).__name__}")
    size, nbytes = getattr(t.buffer, "size", None), math.prod(t.shape) * t.dtype.itemsize
    if size is not None and size < nbytes:
        raise InvalidArgument(f"{what}: its {size}-byte buffer is smaller than its shape {list(t.shape)} of "
                              f"{t.dtype.name} needs ({nbytes} bytes)")
    return t


def _pixels(t, fmt: BitmapPixelFormat, what: str) -> tuple[int, int]:
    """(height, width) of a uint8 [height, width, bytes per pixel] frame in fmt."""
    _device_tensor(t, what)
    if t.dtype != np.uint8 or len(t.shape) != 3:
        raise InvalidArgument(f"{what} must be uint8 [height, width, bytes per pixel], got {t.dtype.name}"
                              f"{list(t.shape)}")
    if t.shape[2] != fmt.channels:
        raise InvalidArgument(f"{what}: {fmt.name} has {fmt.channels} byte(s) per pixel, the frame has "
                              f"{t.shape[2]} ({t.dtype.name}{list(t.shape)})")
    return t.shape[0], t.shape[1]


def _tensor(t, nhwc: bool, channels: tuple, what: str) -> tuple:
    """(N, C, H, W) of a rank-4 image tensor."""
    _device_tensor(t, what)
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


def _per_channel(values, c: int, what: str) -> tuple:
    """c floats, padded to the parameter block's 4."""
    return (*per_channel(values, c, what), *(0.0,) * (4 - c))


def _same_device(a: DeviceTensor, b: DeviceTensor) -> None:
    if a.device is not b.device:
        raise InvalidArgument(f"the frame and the tensor are on different OpenCL devices ({a.device.name}, "
                              f"{b.device.name})")


# -- dispatching --------------------------------------------------------------------------------------
def _kernel(device, dtype, name: str):
    """(kernel, its work-group size, lock), made once per device, element type and name."""
    key = (device, dtype, name)
    found = _kernels.get(key)
    if found is None:
        with _kernels_lock:
            found = _kernels.get(key)
            if found is None:
                kernel = device.kernel("tensorize", dtype, name)
                kernel.set_scalar_arg_dtypes([None, None] + _ARGS[name])
                most = kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device.cl_device)
                local = 1 << (min(LOCAL, int(most)).bit_length() - 1)  # a power of two the kernel can run
                found = _kernels[key] = (kernel, local, threading.Lock())
    return found


def _enqueue(tensor: DeviceTensor, name: str, rows: int, cols: int, *args) -> None:
    """The kernel over rows x cols pixels, one run of `chunk` per item (its last arguments
    are cols, chunk, rows), built for `tensor`'s element type and enqueued on its device."""
    device = tensor.device
    chunk = 1 if device.is_gpu else min(cols, CPU_CHUNK)
    items = rows * -(-cols // chunk)
    try:
        kernel, local, lock = _kernel(device, tensor.dtype, name)
        with lock:
            kernel.set_args(*args, cols, chunk, rows)
            cl.enqueue_nd_range_kernel(device.queue, kernel, (round_up(items, local),), (local,))
    except cl.Error as exc:
        raise DeviceError(f"OpenCL device {device.name}: {name} failed ({str(exc).strip()})") from None
