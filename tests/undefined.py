"""mlrt's answers where ONNX leaves a result undefined (docs/undefined.md), written
out in numpy for the tests.

Tests compare with an oracle (onnx.reference, the node conformance data) only where
the spec defines the result; elsewhere they compare with these rules, which are
mlrt's, never an oracle version's: ml_dtypes 0.5 and 0.7 give different values for
the same undefined casts, and a test that asserted either passed only on the day it
was written.
"""

from __future__ import annotations

import numpy as np

# (bits, signed) of every integer element type, by numpy / ml_dtypes dtype name
INT_TYPES = {"int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
             "uint8": (8, False), "uint16": (16, False), "uint32": (32, False), "uint64": (64, False),
             "int4": (4, True), "uint4": (4, False), "int2": (2, True), "uint2": (2, False)}


def is_int(dtype) -> bool:
    return np.dtype(dtype).name in INT_TYPES


def _as_float64(x) -> np.ndarray:
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return x.astype(np.float32).astype(np.float64) if x.dtype.kind == "V" or x.dtype.itemsize == 1 \
            else x.astype(np.float64)


def float_to_int_defined(x, dtype) -> np.ndarray:
    """Where the spec defines float -> `dtype`: finite values whose truncation fits."""
    bits, signed = INT_TYPES[np.dtype(dtype).name]
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    v = _as_float64(x)
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        return np.isfinite(v) & (t >= lo) & (t <= hi)


def float_to_int(x, dtype) -> np.ndarray:
    """mlrt's float -> integer for every value, as the unsigned bits of the result (the
    element's byte for the 4- and 2-bit types, which hold their low bits).

    Truncate toward zero; where a 32-bit conversion (64-bit for int64, uint32 and
    uint64) overflows, NaN and +-inf included, x86's "integer indefinite" value (the
    lowest value of that width); narrower types keep the low bits.  uint64 converts
    values from 2**63 up as value - 2**63 with the top bit set."""
    bits, signed = INT_TYPES[np.dtype(dtype).name]
    v = _as_float64(x).ravel()
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
    wide = bits == 64 or (bits == 32 and not signed)

    def to_i64(a):
        ok = (a >= -2.0 ** 63) & (a < 2.0 ** 63)
        return np.where(ok, np.where(ok, a, 0).astype(np.int64), np.int64(-2 ** 63))

    if bits == 64 and not signed:
        high = t >= 2.0 ** 63
        r = np.where(high, to_i64(np.where(high, t - 2.0 ** 63, 0)).view(np.uint64) ^ np.uint64(2 ** 63),
                     to_i64(t).view(np.uint64))
    elif wide:
        r = to_i64(t).view(np.uint64)
    else:
        ok = (t > -2.0 ** 31 - 1) & (t < 2.0 ** 31)
        r = np.where(ok, np.where(ok, t, 0).astype(np.int64), np.int64(-2 ** 31)).view(np.uint64)
    r = r & np.uint64(2 ** bits - 1)
    store = np.uint8 if bits <= 8 else np.dtype(f"u{bits // 8}")
    return r.astype(store).reshape(np.shape(x))


def expected_cast(x, expected: np.ndarray) -> np.ndarray:
    """An oracle's Cast of x, with a float -> integer cast replaced by what the spec
    and mlrt define: the truncated value where it fits (exact arithmetic, which is
    the spec; ml_dtypes 0.7 gives 0 for 2**63 -> uint64), mlrt's rule elsewhere.
    Other casts are returned unchanged."""
    x = np.asarray(x)
    if not is_int(expected.dtype) or x.dtype.kind in "iub" or is_int(x.dtype):
        return expected
    out = np.empty_like(expected)
    out.view(f"u{out.dtype.itemsize}")[...] = float_to_int(x, expected.dtype)
    return out


def requantize(acc, a_scale, b_scale, y_scale, y_zero_point, dtype) -> np.ndarray:
    """mlrt's requantization (QLinearConv, QLinearMatMul; docs/undefined.md), as onnxruntime
    computes it: multiplier = (a_scale * b_scale) / y_scale in float32, v = float32(acc) *
    multiplier in float32, clamped to y's range less the zero point (NaN: the low end),
    rounded half to even, the zero point added.  Scales broadcast against acc."""
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        mult = (np.asarray(a_scale, np.float32) * np.asarray(b_scale, np.float32)).astype(np.float32)
        mult = (mult / np.asarray(y_scale, np.float32)).astype(np.float32)
        v = (np.asarray(acc, np.int32).astype(np.float32) * mult).astype(np.float32)
        zp = int(np.asarray(y_zero_point).reshape(-1)[0])
        v = np.where(np.isnan(v), np.float32(info.min - zp), v)
        v = np.clip(v, np.float32(info.min - zp), np.float32(info.max - zp))
        return (np.rint(v).astype(np.int64) + zp).astype(dtype)


def dynamic_quantize(x) -> tuple[np.ndarray, np.float32, np.uint8]:
    """mlrt's DynamicQuantizeLinear (docs/undefined.md): the spec's float32 steps, NaN
    elements outside the range (and quantized to 0), scale 1 for an empty range."""
    x = np.asarray(x, np.float32)
    finite = x[~np.isnan(x)]
    lo = np.float32(min(0.0, float(finite.min()))) if finite.size else np.float32(0)
    hi = np.float32(max(0.0, float(finite.max()))) if finite.size else np.float32(0)
    with np.errstate(all="ignore"):
        scale = np.float32(1) if hi == lo else np.float32((hi - lo) / np.float32(255))
        izp = np.float32(np.float32(0) - lo / scale)
        zp = np.float32(255) if not izp < 255 else izp  # (NaN: 255, as min(255, NaN) in C++)
        zp = np.rint(zp if zp > 0 else np.float32(0))
        q = (x / scale).astype(np.float32)
        q = np.where(np.isnan(q), np.float32(-zp), q)
        y = np.clip(np.rint(np.clip(q, -zp, np.float32(255) - zp)) + zp, 0, 255).astype(np.uint8)
    return y, np.float32(scale), np.uint8(zp)
