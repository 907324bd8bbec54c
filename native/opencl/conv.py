"""Conv and FusedConv on OpenCL (conv.cl): 1-D to 3-D, groups, depthwise, strides,
dilations, pads, optional bias; FusedConv adds Z and an activation before the store.

The geometry comes from the operator's own `geometry` (auto_pad resolved there).
The host lays the input out as stride-phase planes (see conv.cl), builds the tap
offset table and hands the kernels the structs of conv_geometry.h, filled by field
name; constant filters are packed once for the register-blocked GEMM, a non-constant
W is packed on the device each run.  Convolutions with few filters per group
(depthwise) take the direct kernel; GPUs take the local-memory tiled GEMM.
`MLRT_OPENCL_CONV=tiled|blocked` overrides the GEMM choice (tests, tuning).
"""

from __future__ import annotations

import itertools
import os

import numpy as np

from ..._errors import DeviceError
from .._lib import enum_value
from ..ops.fusedconv import FusedConv
from ._programs import struct_bytes
from ._recorders import recorder, round_up

MB, NV = 8, 2        # filters and float16 vectors of grid positions per work-item of mlrt_conv_gemm
TP = 16 * NV         # grid positions per work-item of mlrt_conv_gemm
GEMM_LOCAL = 8       # work-items per work-group of mlrt_conv_gemm (along the grid)
DIRECT_TP = 16       # grid positions per work-item of mlrt_conv_direct
DIRECT_BELOW = 4     # filters per group under which the direct kernel is used
TILED = 64           # filters and grid positions per work-group of mlrt_conv_gemm_tiled (16 x 16 items)
MAX_SPATIAL = 3
# conv.cl's defines (see _programs.family_options)
BUILD_OPTIONS = {"CONV_MB": MB, "CONV_NV": NV, "CONV_TM": TILED, "CONV_TN": TILED}
# FusedConv's activation codes, as kernels/conv.h numbers them (none is conv.cl's default case)
C_CONSTANTS = tuple(sorted({c for c, _ in FusedConv.ACTIVATIONS.values()} - {"MLRT_CONV_ACT_NONE"}))


def _supports(op, inputs) -> bool:
    ks = op.a.kernel_shape
    w = inputs[1] if len(inputs) > 1 else None
    if not ks and w is not None and w.shape is not None:
        ks = w.shape[2:]
    return not ks or len(ks) <= MAX_SPATIAL



def _layout(x_shape, out_shape, p) -> dict:
    """The packed layout of conv.cl, 1-D and 2-D as 3-D with leading 1s: each channel is
    one plane (GD x GH x GW) per stride phase; `tap_off` is where each filter tap
    starts in a channel, and grid position p = (od*GH + oh)*GW + ow for p < P."""
    n = int(p["n_spatial"])
    if n > MAX_SPATIAL:
        raise DeviceError(f"OpenCL Conv covers 1-D to {MAX_SPATIAL}-D, not {n}-D")

    def pad3(values, fill):
        return [fill] * (MAX_SPATIAL - n) + [int(v) for v in values[:n]]

    ins, outs = pad3(x_shape[2:], 1), pad3(out_shape[2:], 1)
    ker, st, dil = pad3(p["kernel"], 1), pad3(p["strides"], 1), pad3(p["dilations"], 1)
    shift = [(k - 1) * d // s for k, d, s in zip(ker, dil, st)]
    grid = [o + s for o, s in zip(outs, shift)]
    plane = grid[0] * grid[1] * grid[2]
    taps = list(itertools.product(*(range(k) for k in ker)))
    phase_of = [tuple(t * d % s for t, d, s in zip(tap, dil, st)) for tap in taps]
    phases = sorted(set(phase_of))
    index = {ph: i for i, ph in enumerate(phases)}
    tap_off = [index[ph] * plane + (t[0] * dil[0] // st[0] * grid[1] + t[1] * dil[1] // st[1]) * grid[2]
               + t[2] * dil[2] // st[2] for t, ph in zip(taps, phase_of)]
    return dict(ins=ins, outs=outs, strides=st, pads=pad3(p["pads_begin"], 0), grid=grid, phases=phases,
                plane=plane, cstride=len(phases) * plane, tap_off=np.asarray(tap_off, np.int64),
                P=((outs[0] - 1) * grid[1] + outs[1]) * grid[2], slack=shift[2] + TP)


def _gemm_kind(k, Mg: int) -> str:
    if Mg < DIRECT_BELOW:
        return "direct"
    forced = os.environ.get("MLRT_OPENCL_CONV")
    if forced in ("tiled", "blocked"):
        return forced
    return "tiled" if k.device.is_gpu and k.device.max_work_group_size >= 256 else "blocked"


def _packed_filters(k, w, G: int, Mg: int, K: int, nmb: int):
    """W as mlrt_conv_gemm reads it: [group][block of MB filters][K][MB], float, zero past Mg."""
    if w.value is not None:
        def pack():
            wf = np.zeros((G, nmb * MB, K), np.float32)
            wf[:, :Mg] = np.asarray(w.value, np.float32).reshape(G, Mg, K)
            return np.ascontiguousarray(wf.reshape(G, nmb, MB, K).transpose(0, 1, 3, 2))
        return k.shared_constant(("filters", G, Mg, K, nmb), pack)
    total = G * nmb * MB * K
    buf = k.scratch(max(total, 1) * 4)
    k.enqueue(k.kernel("mlrt_conv_pack_w"), (round_up(total, 64),), (64,), k.input(1), buf, np.int64(Mg), np.int64(K),
              np.int64(nmb), np.int64(total))
    return buf


def conv(k, op, inputs, outputs):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    z = inputs[3] if len(inputs) > 3 else None
    out_shape, p = op.geometry(inputs)
    lay = _layout(x.shape, out_shape, p)
    N, C, M, G = int(x.shape[0]), int(x.shape[1]), int(w.shape[0]), int(p["group"])
    Cg, Mg = C // G, M // G
    ksize = int(np.prod(w.shape[2:], dtype=np.int64))
    K = Cg * ksize
    off = (np.arange(Cg, dtype=np.int64)[:, None] * lay["cstride"] + lay["tap_off"][None, :]).reshape(-1)
    packed = N * C * lay["cstride"] + lay["slack"]
    if (packed * 4 > k.device.max_alloc or lay["plane"] >= 2**31 or K * MB >= 2**31
            or off.max(initial=0) + lay["P"] + TP >= 2**31):
        raise DeviceError(f"{op.where}: the packed input ({packed * 4:,} bytes) is too large for OpenCL Conv")

    # X -> stride-phase planes (float); a float32 pointwise conv reads X as it is
    plain = (np.dtype(x.dtype) == np.float32 and ksize == 1 and set(lay["strides"]) == {1}
             and not any(p["pads_begin"]) and not any(p["pads_end"]))
    if plain:
        B = k.input(0)
    else:
        B = k.scratch(packed * 4)
        packing = struct_bytes("mlrt_conv_packing", x_shape=lay["ins"], grid=lay["grid"], nphase=len(lay["phases"]),
                               pads=lay["pads"], strides=lay["strides"])
        rows = N * C * len(lay["phases"]) * lay["grid"][0] * lay["grid"][1]
        k.enqueue(k.kernel("mlrt_conv_pack"), (round_up(rows, 16),), (16,), k.input(0), B, k.constant(packing),
                  k.constant(np.asarray(lay["phases"], np.int32).reshape(-1)), np.int64(rows))

    kind = _gemm_kind(k, Mg)
    nmb = -(-Mg // MB)
    flags = (1 if b is not None else 0) | (2 if z is not None else 0) | (4 if plain else 0)
    geo = k.constant(struct_bytes("mlrt_conv_geometry", p=lay["P"], gh=lay["grid"][1], gw=lay["grid"][2],
                                  oh=lay["outs"][1], ow=lay["outs"][2],
                                  osize=int(np.prod(out_shape[2:], dtype=np.int64)), c=C, cg=Cg, m=M, mg=Mg,
                                  cstride=lay["cstride"], k=K, nmb=nmb, flags=flags))
    offs = k.constant(off.astype(np.int32) if off.size else np.zeros(1, np.int32))
    y = k.output(0)
    bias = k.input(2) if b is not None else y  # not read without its flag
    zbuf = k.input(3) if z is not None else y
    act = (np.int32(p.get("activation", enum_value("MLRT_CONV_ACT_NONE"))), np.float32(p.get("alpha", 0.0)),
           np.float32(p.get("beta", 0.0)))
    if kind == "direct":
        k.enqueue(k.kernel("mlrt_conv_direct"), (round_up(-(-lay["P"] // DIRECT_TP), 8), M, N), (8, 1, 1),
                  B, offs, k.input(1), bias, zbuf, y, geo, *act)
    elif kind == "tiled":
        k.enqueue(k.kernel("mlrt_conv_gemm_tiled"), (-(-lay["P"] // TILED) * 16, -(-Mg // TILED) * 16, N * G),
                  (16, 16, 1), B, offs, k.input(1), bias, zbuf, y, geo, *act)
    else:
        wbuf = _packed_filters(k, w, G, Mg, K, nmb)
        k.enqueue(k.kernel("mlrt_conv_gemm"), (nmb, round_up(-(-lay["P"] // TP), GEMM_LOCAL), N * G),
                  (1, GEMM_LOCAL, 1), B, offs, wbuf, bias, zbuf, y, geo, *act)


recorder("Conv", family="conv", supports=_supports)(conv)
recorder("FusedConv", family="conv", domain="com.microsoft", supports=_supports)(conv)
