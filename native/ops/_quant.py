"""Shared semantics of the quantization operators: which element types they take,
which scale element each value of x uses (per tensor, per axis, blocked), the type
x / scale is computed in, and constant weights of the integer products packed once."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ... import _errors
from .. import _lib
from .._lib import np_type, onnx_type
from ._base import Info, View, broadcast_shape, broadcast_view, normalize_axis

INT8, UINT8 = np.dtype(np.int8), np.dtype(np.uint8)
INT16, UINT16 = np.dtype(np.int16), np.dtype(np.uint16)
INT32 = np.dtype(np.int32)
FLOAT, DOUBLE = np.dtype(np.float32), np.dtype(np.float64)
LOW_INTS = tuple(np_type(t) for t in (TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2))
FLOAT8 = tuple(np_type(t) for t in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
                                    TensorProto.FLOAT8E5M2FNUZ))
FLOAT4 = np_type(TensorProto.FLOAT4E2M1)
QUANTIZED = (INT8, UINT8, INT16, UINT16) + LOW_INTS + FLOAT8 + (FLOAT4,)  # what QuantizeLinear produces
DEQUANTIZABLE = QUANTIZED + (INT32,)              # what DequantizeLinear reads
EIGHT_BIT = (INT8, UINT8)                         # MatMulInteger, ConvInteger, QLinear*


def is_float(dtype) -> bool:
    """float32/64, float16, bfloat16 (ml_dtypes' bfloat16 has kind 'V')."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or onnx_type(dtype) == TensorProto.BFLOAT16


def attribute_type(op, code: int, name: str) -> np.dtype:
    """The numpy type of an element-type attribute (output_dtype, precision)."""
    try:
        return np_type(int(code))
    except (KeyError, ValueError, TypeError):
        raise op.fail(f"{name} {code} is not an ONNX element type") from None


def refuse_unsupported(op, dtype, allowed, what: str) -> None:
    """NotImplemented for element types the C core has no type for (float6); InvalidModel
    for types the operator never takes."""
    dtype = np.dtype(dtype)
    if onnx_type(dtype) == 0:
        raise _errors.NotImplemented(
            f"{op.where}: {what} of type {dtype.name} is not supported (mlrt has no such element type)")
    if dtype not in allowed:
        raise op.fail(f"{what} has type {dtype.name}, expected one of {', '.join(d.name for d in allowed)}")


def compute_type(x_dtype, scale_dtype) -> int:
    """ONNX type in which onnx.reference divides x by the scale (numpy's promotion)."""
    x, s = np.dtype(x_dtype), np.dtype(scale_dtype)
    if DOUBLE in (x, s) or INT32 in (x, s):
        return TensorProto.DOUBLE
    if x == s:
        return onnx_type(x)
    return TensorProto.FLOAT


def block_params(op, x: Info, scale: Info, zero_point: Info | None, axis: int, block_size: int) -> dict:
    """mlrt_quantize_params geometry: x as [outer, axis_len, inner] and the strides
    that take an element to its scale (per tensor, per axis or blocked)."""
    if zero_point is not None and tuple(zero_point.shape) != tuple(scale.shape) and not (
            zero_point.size == 1 and scale.size == 1):
        raise op.fail(f"the zero point's shape {tuple(zero_point.shape)} differs from the scale's "
                      f"{tuple(scale.shape)}")
    shape = tuple(x.shape)
    size = x.size
    if scale.size == 1:  # per tensor (a scalar or a one-element tensor): one long row
        return dict(outer=1, axis_len=1, inner=size, block_size=1, s_outer=0, s_block=0, s_inner=0)
    if x.rank == 0:
        raise op.fail(f"a scale of shape {tuple(scale.shape)} does not fit a scalar x")
    axis = normalize_axis(int(axis), x.rank, op.where)
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    n = shape[axis]
    if not block_size:
        if scale.rank != 1 or scale.shape[0] != n:
            raise op.fail(f"a per-axis scale must be 1-D with {n} elements (x's axis {axis}), "
                          f"got shape {tuple(scale.shape)}")
        if inner == 1:  # the last axis: rows of n elements, the scale running along them
            return dict(outer=outer, axis_len=1, inner=n, block_size=1, s_outer=0, s_block=0, s_inner=1)
        return dict(outer=outer, axis_len=n, inner=inner, block_size=1, s_outer=0, s_block=1, s_inner=0)
    block_size = int(block_size)
    if block_size < 0:
        raise op.fail(f"block_size must be positive, got {block_size}")
    blocks = -(-n // block_size)
    expect = shape[:axis] + (blocks,) + shape[axis + 1:]
    if tuple(scale.shape) != expect:
        raise op.fail(f"with block_size {block_size} on axis {axis} the scale must have shape {expect}, "
                      f"got {tuple(scale.shape)}")
    return dict(outer=outer, axis_len=n, inner=inner, block_size=block_size, s_outer=blocks * inner,
                s_block=inner, s_inner=1)


def check_types(op, inputs: list[Info | None], names: tuple[str, ...], allowed) -> None:
    """Each present input named in `names` (None to skip a slot) has a type in `allowed`."""
    for info, name in zip(inputs, names):
        if info is not None and name is not None:
            refuse_unsupported(op, info.dtype, allowed, name)


def same_type(op, a: Info | None, b: Info | None, what: str) -> None:
    if a is not None and b is not None and np.dtype(a.dtype) != np.dtype(b.dtype):
        raise op.fail(f"{what}: types {np.dtype(a.dtype).name} and {np.dtype(b.dtype).name} differ")


class MatMulGeometry:
    """numpy.matmul shapes for the integer products, and views of the operands and of
    their per-row (a) / per-column (b) zero points and scales over a common batch shape."""

    def __init__(self, op, a: Info, b: Info):
        if a.rank == 0 or b.rank == 0:
            raise op.fail("the operands must have rank >= 1")
        self.op = op
        self.sa = tuple(a.shape) if a.rank >= 2 else (1,) + tuple(a.shape)
        self.sb = tuple(b.shape) if b.rank >= 2 else tuple(b.shape) + (1,)
        if self.sa[-1] != self.sb[-2]:
            raise op.fail(f"shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply (inner dimensions "
                          f"{self.sa[-1]} and {self.sb[-2]})")
        self.batch = broadcast_shape(self.sa[:-2], self.sb[:-2], where=op.where)
        self.out = self.batch + ((self.sa[-2],) if a.rank >= 2 else ()) + ((self.sb[-1],) if b.rank >= 2 else ())
        self.va = self.batch + self.sa[-2:]
        self.vb = self.batch + self.sb[-2:]

    def a_view(self) -> View:
        return broadcast_view(self.sa, self.va)

    def b_view(self) -> View:
        return broadcast_view(self.sb, self.vb)

    def side_view(self, t: Info, side: str, what: str) -> View:
        """A zero point or scale of a (per tensor or per row: (M,) or [..., M, 1]) or of
        b (per tensor or per column: (N,) or [..., 1, N]) seen with its operand's view shape."""
        target = self.va if side == "a" else self.vb
        if t.size == 1:
            return View(target, (0,) * len(target))
        shape = tuple(t.shape)
        if len(shape) == 1:
            shape = (shape[0], 1) if side == "a" else (1, shape[0])
        unit = -1 if side == "a" else -2
        fits = len(shape) <= len(target) and shape[unit] == 1 and all(
            s in (1, n) for s, n in zip(shape[::-1], target[::-1]))
        if not fits:
            kind = "per row of a" if side == "a" else "per column of b"
            raise self.op.fail(f"{what} of shape {tuple(t.shape)} is neither per tensor nor {kind} "
                               f"(operand view {target})")
        return broadcast_view(shape, target)


def check_scales(op, pairs) -> None:
    """Each (scale, zero point, name) is per tensor: one float scale, an optional one-element zero point."""
    for s, z, name in pairs:
        if np.dtype(s.dtype) != FLOAT or s.size != 1:
            raise op.fail(f"{name}_scale must be one float (per tensor), got {np.dtype(s.dtype).name} "
                          f"of shape {tuple(s.shape)}")
        if z is not None and z.size != 1:
            raise op.fail(f"{name}_zero_point must be one value (per tensor), got shape {tuple(z.shape)}")


def check_unary_quantized(op, inputs, x: str = "x", y: str = "y") -> list:
    """The inputs of a one-input quantized operator (X, x_scale, x_zero_point, y_scale,
    y_zero_point: com.microsoft's QLinearSigmoid, pools, softmax ...), padded to five and
    checked (8-bit X, zero points of X's type, per-tensor scales); `x`, `y` spell the
    inputs' names in messages as the operator's schema does."""
    ins = list(inputs) + [None] * (5 - len(inputs))
    for i in (0, 1, 3):
        op.need(ins, i)
    xv, x_s, x_z, y_s, y_z = ins
    check_types(op, ins, ("X", None, f"{x}_zero_point", None, f"{y}_zero_point"), EIGHT_BIT)
    same_type(op, xv, x_z, f"X and {x}_zero_point")
    same_type(op, xv, y_z, f"X and {y}_zero_point")
    check_scales(op, ((x_s, x_z, x), (y_s, y_z, y)))
    return ins


def packed_conv_weights(op, w: Info, group: int):
    """A constant W of ConvInteger / QLinearConv packed for the integer product by the C
    core's own mlrt_qconv_pack_weights (once per node: kept on the op while W is the same
    array), to hand to the kernel after the node's inputs; None where the kernel reads W
    as it is (W not constant, one input channel per group: the depthwise path) or the
    runtime has no such function."""
    lib = _lib.lib()
    if w.value is None or w.rank < 3 or (w.shape[1] == 1 and group > 1) or not hasattr(lib, "mlrt_qconv_pack_weights"):
        return None
    weights = np.ascontiguousarray(w.value)
    filters, kdim = weights.shape[0], weights.size // max(weights.shape[0], 1)
    tail = (onnx_type(weights.dtype), _lib.ffi().cast("void *", weights.ctypes.data))
    if hasattr(lib, "mlrt_qconv_pack_weights_quads"):  # (in the order of the kernel's path for this window)
        taps = int(np.prod(weights.shape[2:], dtype=np.int64)) if weights.ndim <= 4 else 1  # (1-D, 2-D windows)
        return _packed_once(op, w.value, group, lib.mlrt_qconv_pack_weights_quads, (group, filters, kdim, taps) + tail)
    return _packed_once(op, w.value, group, lib.mlrt_qconv_pack_weights, (group, filters, kdim) + tail)


def _packed_once(op, value, key, pack, args):
    """pack(*args, capacity, size, out) run twice (the size, then the bytes) and its result
    kept on the op while `value` is the same array and `key` the same: once per node."""
    cached = getattr(op, "_qpacked", None)
    if cached is not None and cached[0] is value and cached[1] == key:
        return cached[2]
    ffi = _lib.ffi()
    size = ffi.new("int64_t *")
    _lib.raise_status(pack(*args, 0, size, ffi.NULL), op.where)
    # (its panels on 64-byte lines where the colsums before them are: B's columns a multiple of 16)
    room = np.empty(size[0] + 64, np.uint8)
    packed = room[-room.ctypes.data % 64:][:size[0]]
    _lib.raise_status(pack(*args, packed.size, size, ffi.cast("void *", packed.ctypes.data)), op.where)
    op._qpacked = (value, key, packed)
    return packed


def packed_matmul_b(op, b: Info, transposed: bool = False):
    """A constant 2-D B of MatMulInteger / QLinearMatMul / QGemm (B' = B transposed where
    `transposed`) packed for the integer product by the C core's mlrt_qmatmul_pack_b, once
    per node (kept on the op while B is the same array), to hand to the kernel after the
    node's inputs; None where B is not a constant matrix or the runtime has no such function."""
    lib = _lib.lib()
    if b.value is None or b.rank != 2 or not hasattr(lib, "mlrt_qmatmul_pack_b"):
        return None
    v = np.ascontiguousarray(b.value)
    rows, cols = v.shape
    k, n, sk, sn = (cols, rows, 1, cols) if transposed else (rows, cols, cols, 1)
    return _packed_once(op, b.value, transposed, lib.mlrt_qmatmul_pack_b,
                        (k, n, onnx_type(v.dtype), _lib.ffi().cast("void *", v.ctypes.data), sk, sn))
