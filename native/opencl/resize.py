"""Resize and Upsample on OpenCL (resize.cl), float32 and float16, every mode.

The operator's semantics (`_resize._Resize.pack`: modes, per-axis scales, roi,
which axes are unchanged) decide everything; the per-axis tap tables the kernels
read are the C kernel's own (`mlrt_resize_taps` in native/kernels/resize.c), so both
providers pick the same source elements with the same weights.  Tables are built
once per plan and live on the device.
"""

from __future__ import annotations

import numpy as np

from .. import _lib
from ..ops._base import contiguous_strides
from ..ops._resize import MODES
from ._recorders import recorder
from .movement import enqueue_rows


def _name(table: dict, code: int) -> str:
    """The ONNX name of a mode the launch parameters hold as a constant of kernels/resize.h."""
    return next(name for name, constant in table.items() if _lib.enum_value(constant) == code)


def tap_table(p: dict, d: int, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices int32 [n_out, taps], weights float32 [n_out, taps]) of axis d; index -1
    in tap 0 marks an extrapolated position.  Built by the C kernel's own code
    (`mlrt_resize_taps`), so both providers read one table."""
    ffi, lib = _lib.ffi(), _lib.lib()
    _, params, _ = _lib.pack_params("mlrt_resize_params", p)
    taps = ffi.new("int64_t *")
    _lib.raise_status(lib.mlrt_resize_taps(params, d, n_in, n_out, 0, taps, ffi.NULL, ffi.NULL), "Resize")
    idx = np.empty((n_out, taps[0]), np.int32)
    w = np.empty((n_out, taps[0]), np.float32)
    _lib.raise_status(lib.mlrt_resize_taps(params, d, n_in, n_out, idx.size, taps, ffi.cast("int32_t *", idx.ctypes.data),
                                           ffi.cast("float *", w.ctypes.data)), "Resize")
    return idx, w


@recorder("Resize", "Upsample", family="resize")
def resize(k, op, inputs, outputs):
    x, y = inputs[0], outputs[0]
    p = op.launch(inputs, outputs).params
    if y.size == 0:
        return
    if x.rank == 0:  # one element: an unchanged axis of length 1
        xs, ys, tables = (1,), (1,), [tap_table({"identity": [1]}, 0, 1, 1)]
    else:
        xs, ys = x.shape, y.shape
        tables = [tap_table(p, d, xs[d], ys[d]) for d in range(x.rank)]
    rank, cols = len(ys), ys[-1]
    rows = y.size // cols
    mode = _name(MODES, p["mode"])
    if mode == "nearest":
        bits = np.uint16 if np.dtype(x.dtype).itemsize == 2 else np.uint32
        axes, idx, _ = _packed(tables, xs, ys)
        enqueue_rows(k, k.kernel("mlrt_resize_nearest"), rows, cols, k.input(0), k.output(0), k.constant(axes),
                     k.constant(idx), np.int32(rank), bits(p["extrapolation_bits"] & int(np.iinfo(bits).max)))
        return
    ext = np.float32(p["extrapolation_value"])
    if rank >= 2 and all(p["identity"][d] for d in range(rank - 2)) and tables[-2][0].shape[1] == 2 \
            and tables[-1][0].shape[1] == 2:
        (hidx, hw), (widx, ww) = tables[-2], tables[-1]
        enqueue_rows(k, k.kernel("mlrt_resize_bilinear"), rows, cols, k.input(0), k.output(0), k.constant(hidx),
                     k.constant(hw), k.constant(widx), k.constant(ww), np.int64(xs[-2]), np.int64(xs[-1]),
                     np.int64(ys[-2]), ext)
        return
    axes, idx, w = _packed(tables, xs, ys)
    enqueue_rows(k, k.kernel("mlrt_resize_taps"), rows, cols, k.input(0), k.output(0), k.constant(axes),
                 k.constant(idx), k.constant(w), np.int32(rank), ext)


def _packed(tables, xs, ys):
    """(axes, idx, w) as the kernels read them: per axis (output length, taps, first
    entry, input stride), then every axis's indices and weights one after another."""
    axes, first = [], 0
    for (idx, _), n_out, stride in zip(tables, ys, contiguous_strides(xs)):
        axes += [n_out, idx.shape[1], first, stride]
        first += idx.size
    idx = np.concatenate([t[0].reshape(-1) for t in tables])
    w = np.concatenate([t[1].reshape(-1) for t in tables])
    return np.array(axes, np.int64), idx, w
