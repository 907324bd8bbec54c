"""Sliding-window geometry shared by Conv, ConvTranspose and the pooling operators:
attribute defaults per spatial dimension, auto_pad resolution and output sizes."""

from __future__ import annotations

import math

import numpy as np

MAX_SPATIAL = 6  # the C parameter structs hold 6 spatial dimensions


def per_dim(op, name: str, value, n: int, default: int, minimum: int) -> list[int]:
    """An ints attribute with one value per spatial dimension (default when absent)."""
    if value is None or len(value) == 0:
        return [default] * n
    value = [int(v) for v in value]
    if len(value) != n:
        raise op.fail(f"{name} has {len(value)} values, expected {n} (one per spatial dimension)")
    if any(v < minimum for v in value):
        raise op.fail(f"{name} values must be >= {minimum}, got {value}")
    return value


def window_geometry(op, in_shape, kernel, strides, dilations, pads, auto_pad: str, ceil_mode: bool = False):
    """Output spatial shape and (pads_begin, pads_end) of a sliding window.

    auto_pad SAME_UPPER / SAME_LOWER gives ceil(in / stride) outputs with the padding
    split evenly (the odd element at the end for UPPER, at the start for LOWER);
    VALID pads nothing; NOTSET uses `pads` (begins then ends).  ceil_mode rounds the
    output size up, dropping a last window that would start in the end padding."""
    n = len(in_shape)
    if n > MAX_SPATIAL:
        raise op.fail(f"{n} spatial dimensions: at most {MAX_SPATIAL} are supported")
    auto_pad = (auto_pad or "NOTSET").upper()
    eff = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = [-(-i // s) for i, s in zip(in_shape, strides)]
        total = [max(0, (o - 1) * s + e - i) for o, s, e, i in zip(out, strides, eff, in_shape)]
        small = [t // 2 for t in total]
        begin = small if auto_pad == "SAME_UPPER" else [t - h for t, h in zip(total, small)]
        end = [t - b for t, b in zip(total, begin)]
        return out, begin, end
    if auto_pad == "VALID":
        begin = end = [0] * n
    elif auto_pad == "NOTSET":
        p = per_dim(op, "pads", pads, 2 * n, 0, 0)
        begin, end = p[:n], p[n:]
    else:
        raise op.fail(f"auto_pad '{auto_pad}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    out = []
    for i, e, s, b, en in zip(in_shape, eff, strides, begin, end):
        span = i + b + en - e
        if span < 0:
            raise op.fail(f"the window ({e}) is larger than the padded input ({i + b + en})")
        o = (math.ceil(span / s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= i + b:
            o -= 1
        out.append(o)
    return out, list(begin), list(end)


def pad6(values, fill: int = 0) -> list[int]:
    return list(values) + [fill] * (MAX_SPATIAL - len(values))


def conv_operands(op, inputs):
    """X, W, optional B of a Conv-like node, one element type, W of X's rank >= 3; and
    the number of spatial dimensions."""
    x, w = op.need(inputs, 0), op.need(inputs, 1)
    b = inputs[2] if len(inputs) > 2 else None
    for i in (w, b):
        if i is not None and np.dtype(i.dtype) != np.dtype(x.dtype):
            raise op.fail(f"inputs have different element types: {np.dtype(x.dtype).name}, "
                          f"{np.dtype(i.dtype).name}")
    if x.rank < 3 or w.rank != x.rank:
        raise op.fail(f"X {x.shape} and W {w.shape} must have the same rank >= 3")
    return x, w, b, x.rank - 2
