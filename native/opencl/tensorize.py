"""Media's image kernels on the OpenCL device (tensorize.cl): a frame uploaded once is
cropped, resized, colour-converted and normalized straight into the device tensor an
OpenCL partition reads, and back.  The OpenCL provider's `image_kernel` calls these;
media checks the arguments first (media/_gpu.py: shapes, formats, crop, index), so only
what is OpenCL's is checked here (the tensors' type and buffers, one device).

Same meaning as the C kernels (native/kernels/tensorize.h).  The parameter block
travels as a kernel argument (a struct by value): a call copies nothing to the device
but the launch itself, which is enqueued on the device's in-order queue and not waited
for.  This module also gives the program its build options: the pixel-format numbers,
as kernels/tensorize.h numbers them.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..._errors import DeviceError, InvalidArgument
from .._lib import struct_dtype, struct_value
from ._drivers import cl
from ._memory import DeviceTensor
from ._recorders import round_up

__all__ = ["tensorize", "detensorize"]

LOCAL = 256       # work-group size (globals are rounded up to it)
CPU_CHUNK = 64    # pixels of a row one item handles on a CPU device (1 on GPUs)

# the kernels' arguments after the two buffers (tensorize.cl): the parameter struct of
# native/kernels/tensorize.h (its numpy type laid out by cffi), then sizes; typed, so
# pyopencl packs them without probing
_ARGS = {"mlrt_tensorize": ("mlrt_tensorize_params", 5), "mlrt_detensorize": ("mlrt_detensorize_params", 4)}

_kernels: dict = {}  # (device, dtype, kernel name) -> (kernel, local size, lock): kernels keep their arguments
_kernels_lock = threading.Lock()


def tensorize(pixels: DeviceTensor, out: DeviceTensor, *, pixel_format: int, crop, index: int, rgb: bool,
              nhwc: bool, alpha, beta) -> None:
    """Image `index` of `out` ([N, C, H, W], or [N, H, W, C] with nhwc) from the rectangle
    `crop` (x, y, width, height) of `pixels` (uint8 [height, width, bytes per pixel] in
    the kernel format `pixel_format`), as native/kernels/tensorize.h says."""
    _device_tensors(pixels, "pixels", out, "out")
    h, w, c = (out.shape[1], out.shape[2], out.shape[3]) if nhwc else (out.shape[2], out.shape[3], out.shape[1])
    x, y, width, height = crop
    p = struct_value("mlrt_tensorize_params", dict(
        src_format=int(pixel_format), crop_x=x, crop_y=y, crop_width=width, crop_height=height, dst_order=bool(rgb),
        nhwc=bool(nhwc), batch_index=index, alpha=_four(alpha, c), beta=_four(beta, c)))
    if h and w:
        _enqueue(out, "mlrt_tensorize", h, w, pixels.buffer, out.buffer, p, pixels.shape[1], c)


def detensorize(tensor: DeviceTensor, out: DeviceTensor, *, pixel_format: int, index: int, rgb: bool, nhwc: bool,
                alpha, beta) -> None:
    """The frame `out` (uint8 [H, W, bytes per pixel] in the kernel format
    `pixel_format`) from image `index` of `tensor`, as native/kernels/tensorize.h says."""
    _device_tensors(tensor, "tensor", out, "out")
    h, w = out.shape[0], out.shape[1]
    c = tensor.shape[3] if nhwc else tensor.shape[1]
    p = struct_value("mlrt_detensorize_params", dict(
        dst_format=int(pixel_format), src_order=bool(rgb), nhwc=bool(nhwc), batch_index=index,
        alpha=_four(alpha, c), beta=_four(beta, c)))
    if h and w:
        _enqueue(tensor, "mlrt_detensorize", h, w, tensor.buffer, out.buffer, p, c)


def _device_tensors(a, a_name: str, b, b_name: str) -> None:
    """Both are DeviceTensors whose buffers hold their shapes, on one OpenCL device."""
    for t, what in ((a, a_name), (b, b_name)):
        if not isinstance(t, DeviceTensor):
            raise InvalidArgument(f"{what} must be an OpenCL DeviceTensor, got {type(t).__name__}")
        size, nbytes = getattr(t.buffer, "size", None), math.prod(t.shape) * t.dtype.itemsize
        if size is not None and size < nbytes:
            raise InvalidArgument(f"{what}: its {size}-byte buffer is smaller than its shape {list(t.shape)} of "
                                  f"{t.dtype.name} needs ({nbytes} bytes)")
    if a.device is not b.device:
        raise InvalidArgument(f"the frame and the tensor are on different OpenCL devices ({a.device.name}, "
                              f"{b.device.name})")


def _four(values, c: int) -> tuple:
    """c floats, padded to the parameter block's 4."""
    return (*(float(v) for v in values[:c]), *(0.0,) * (4 - c))


def _kernel(device, dtype, name: str):
    """(kernel, its work-group size, lock), made once per device, element type and name."""
    key = (device, dtype, name)
    found = _kernels.get(key)
    if found is None:
        with _kernels_lock:
            found = _kernels.get(key)
            if found is None:
                kernel = device.kernel("tensorize", dtype, name)
                params, sizes = _ARGS[name]
                kernel.set_scalar_arg_dtypes([None, None, struct_dtype(params)] + [np.int64] * sizes)
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
