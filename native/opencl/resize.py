"""Resize and Upsample on OpenCL (resize.cl), float32 and float16, every mode.

The operator's semantics (`_resize._Resize.pack`: modes, per-axis scales, roi,
which axes are unchanged) decide everything; this file only turns them into the
per-axis tap tables the kernels read -- the same tables, built with the same float64
expressions in the same order, as the C kernel's `rs_axis_build` (native/kernels/
resize.c), so nearest picks the same source elements bit for bit.  Tables are built
once per plan and live on the device.
"""

from __future__ import annotations

import numpy as np

from .._lib import enum_value
from ..ops._base import contiguous_strides
from ..ops._resize import COORD_MODES, MODES, NEAREST_MODES
from ._runtime import launcher
from .movement import enqueue_rows


def _name(table: dict, code: int) -> str:
    """The ONNX name of a mode the launch parameters hold as a constant of kernels/resize.h."""
    return next(name for name, constant in table.items() if enum_value(constant) == code)


def _coords(p: dict, d: int, n_in: int, n_out: int) -> np.ndarray:
    """Source coordinate of every output position along axis d (resize.c rs_coord)."""
    s = float(p["scales"][d])
    length, y, last = s * float(n_in), np.arange(n_out, dtype=np.float64), float(n_in - 1)
    mode = _name(COORD_MODES, p["coord_mode"])
    if mode == "half_pixel":
        return (y + 0.5) / s - 0.5
    if mode == "half_pixel_symmetric":
        offset = float(n_in) / 2 * (1 - float(n_out) / length)
        return offset + (y + 0.5) / s - 0.5
    if mode == "pytorch_half_pixel":
        return np.full(n_out, -0.5) if length == 1 else (y + 0.5) / s - 0.5
    if mode == "align_corners":
        return np.zeros(n_out) if length == 1 else y * last / (length - 1)
    if mode == "asymmetric":
        return y / s
    if mode == "tf_crop_and_resize":
        r0, r1 = float(p["roi_start"][d]), float(p["roi_end"][d])
        x = np.full(n_out, (r1 - r0) * last / 2) if length == 1 else y * (r1 - r0) * last / (length - 1)
        return x + r0 * last
    return (y + 0.5) / s  # tf_half_pixel_for_nn


def _round(x: np.ndarray, mode: str, scale: float) -> np.ndarray:
    f = np.floor(x)
    r = x - f
    up = {"round_prefer_floor": r > 0.5, "round_prefer_ceil": r >= 0.5, "floor": np.zeros_like(r, bool),
          "ceil": np.ones_like(r, bool)}.get(mode, np.full(r.shape, scale < 1))
    return f.astype(np.int64) + ((r != 0) & up)


def _linear_w(t):
    return np.clip(1 - np.abs(t), 0, 1)


def _cubic_w(t, a):
    t = np.abs(t)
    t2, t3 = t * t, t * t * t
    return np.where(t <= 1, (a + 2) * t3 - (a + 3) * t2 + 1,
                    np.where(t < 2, a * t3 - 5 * a * t2 + 8 * a * t - 4 * a, 0.0))


def _cubic4(r, a):
    r1, u = r + 1, 1 - r
    u1 = u + 1
    return np.stack([((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
                     ((a + 2) * u - (a + 3)) * u * u + 1, ((a * u1 - 5 * a) * u1 + 8 * a) * u1 - 4 * a], axis=1)


def tap_table(p: dict, d: int, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices int32 [n_out, taps], weights float32 [n_out, taps]) of axis d; index -1
    in tap 0 marks an extrapolated position.  Mirrors resize.c rs_axis_build."""
    if p["identity"][d]:
        return np.arange(n_out, dtype=np.int32).reshape(-1, 1), np.ones((n_out, 1), np.float32)
    mode, scale = _name(MODES, p["mode"]), float(p["scales"][d])
    x = _coords(p, d, n_in, n_out)
    crop = _name(COORD_MODES, p["coord_mode"]) == "tf_crop_and_resize"
    ext = (x < 0) | (x > n_in - 1) | np.isnan(x) if crop else None
    if mode == "nearest":
        taps, start, s = 1, 0, 1.0
    else:
        s = scale if p["antialias"] and scale < 1 else 1.0
        start = int(np.floor(-(1.0 if mode == "linear" else 2.0) / s)) + 1
        taps = 2 - 2 * start
    lim = float(n_in + taps + 2)
    x = np.clip(np.nan_to_num(x, nan=0.0, posinf=lim, neginf=-lim), -lim, lim)
    if mode == "nearest":
        idx = _round(x, _name(NEAREST_MODES, p["nearest_mode"]), scale).reshape(-1, 1)
        w = np.ones((n_out, 1))
    else:
        fl = np.floor(x)
        ratio = x - fl
        base = fl.astype(np.int64)
        whole = ratio == 0  # the window left of an exact integer, as onnx.reference takes it
        base[whole] -= 1
        ratio[whole] = 1
        a = float(p["cubic_coeff_a"])
        if not p["antialias"] and mode == "linear":
            w = np.stack([1 - ratio, ratio], axis=1)
        elif not p["antialias"]:
            w = _cubic4(ratio, a)
        else:
            arg = ((np.arange(taps) + start)[None, :] - ratio[:, None]) * s
            w = _linear_w(arg) if mode == "linear" else _cubic_w(arg, a)
            total = w.sum(axis=1, keepdims=True)
            w = np.divide(w, total, out=w.copy(), where=total != 0)
        idx = base[:, None] + start + np.arange(taps)[None, :]
        if p["exclude_outside"]:
            w = np.where((idx < 0) | (idx >= n_in), 0.0, w)
            total = w.sum(axis=1, keepdims=True)
            w = w / np.where(total == 0, 1.0, total)
    idx = np.clip(idx, 0, n_in - 1).astype(np.int32)
    if ext is not None:
        idx[ext, 0] = -1
    return idx, w.astype(np.float32)


@launcher("Resize", "Upsample", family="resize")
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
