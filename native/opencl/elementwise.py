"""Broadcasting elementwise ops on OpenCL (elementwise.cl): Add, Sub, Mul, Div, Pow,
Max, Min, Sum, Mean, PRelu, the comparisons, and Where.

The inputs are the views `op.launch()` gives (each input seen in y's shape, stride 0
on broadcast dims; legacy and PRelu alignment included).  Before dispatching, dims
that every operand walks alike are merged and size-1 dims dropped; the last merged
dim is the row the kernels vectorise along (see elementwise.cl), the others are
walked through views -- of rank 0 for same-shape and scalar operands.
Variadic ops run as a chain of pairs into y, as the C kernels do (so float16 rounds
after each step the same way), and Mean then divides by the input count.
"""

from __future__ import annotations

import numpy as np

from ..._errors import DeviceError
from .._lib import MAX_RANK
from ..ops._base import View, contiguous_strides
from ._recorders import recorder
from .movement import bits_dtype

WG = 64   # work-items per work-group
VEC = 8   # elements per work-item of the float kernels (a float8; VEC in the .cl files)
BUILD_OPTIONS = {"VEC": VEC}  # elementwise.cl's defines (see _programs.family_options)

_KERNELS = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "max", "Min": "min",
            "Sum": "add", "Mean": "add", "PRelu": "prelu", "Pow": "pow",
            "Equal": "equal", "Less": "less", "LessOrEqual": "less_or_equal",
            "Greater": "greater", "GreaterOrEqual": "greater_or_equal"}
_POW_EXPONENTS = ("float32", "float16", "int32", "int64")
_ANY = ("float32", "float16", "float64", "bfloat16", "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64", "bool")


def enqueue_1d(k, kernel, n: int, *args) -> None:
    """n work-items in groups of WG (the kernel guards i < n)."""
    k.enqueue(kernel, (-(-n // WG) * WG,), (WG,), *args)


def enqueue_vec(k, kernel, n: int, *args) -> None:
    """Work-items for n elements, VEC each (the kernel does the tail one by one)."""
    enqueue_1d(k, kernel, -(-n // VEC), *args)


def merged(shape, *strides) -> tuple[tuple, list[tuple]]:
    """(shape, strides per operand) with size-1 dims dropped and adjacent dims merged
    where every operand steps through them as through one dim."""
    dims = []  # [size, [stride per operand]]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        st = [s[d] for s in strides]
        if dims and all(p == q * n for p, q in zip(dims[-1][1], st)):
            dims[-1][0] *= int(n)
            dims[-1][1] = st
        else:
            dims.append([int(n), st])
    return tuple(g[0] for g in dims), [tuple(g[1][k] for g in dims) for k in range(len(strides))]


def binary(k, name: str, a, va: View, b, vb: View, y, out_shape, dtype=None) -> None:
    """y = name(a, b) over y's shape, a and b seen through views of that shape."""
    shape, (sa, sb, _) = merged(out_shape, va.strides, vb.strides, contiguous_strides(out_shape))
    if not shape:  # one element
        shape, sa, sb = (1,), (1,), (1,)
    if sa[-1] not in (0, 1) or sb[-1] not in (0, 1) or sa[-1] == sb[-1] == 0:  # (no broadcast makes these)
        raise DeviceError(f"OpenCL {name}: operands with row strides {sa[-1]}, {sb[-1]} are not supported")
    check_rank(shape[:-1])
    n_inner, n_rows = shape[-1], int(np.prod(shape[:-1], dtype=np.int64))
    rows(k, k.kernel(f"mlrt_{name}", dtype), shape, a, k.view(shape[:-1], sa[:-1]), np.int64(sa[-1]),
         b, k.view(shape[:-1], sb[:-1]), np.int64(sb[-1]), y, np.int64(n_inner), np.int64(n_rows))


def check_rank(*shapes) -> None:
    """Views hold MLRT_MAX_RANK dims (_common.cl): more falls back to the CPU."""
    if any(len(s) > MAX_RANK for s in shapes):
        raise DeviceError(f"OpenCL views hold {MAX_RANK} dims, not {max(len(s) for s in shapes)}")


def rows(k, kernel, shape, *args) -> None:
    """A kernel whose work-item (i, r) does VEC elements of row r from i * VEC, over the
    rows (last dim) of `shape`; rows shorter than a work-group's VEC * WG elements put
    WG rows in one (two work-group shapes only: PoCL compiles a kernel per shape)."""
    n_inner, n_rows = shape[-1], int(np.prod(shape[:-1], dtype=np.int64))
    chunks = -(-n_inner // VEC)
    l0 = WG if chunks >= WG else 1
    l1 = WG // l0
    k.enqueue(kernel, (-(-chunks // l0) * l0, -(-n_rows // l1) * l1), (l0, l1), *args)


def _pow_kernel(inputs) -> str:
    base, exponent = np.dtype(inputs[0].dtype).name, np.dtype(inputs[1].dtype).name
    if exponent == base:
        return "pow"
    if exponent not in _POW_EXPONENTS:
        raise DeviceError(f"OpenCL Pow takes a {'/'.join(_POW_EXPONENTS)} exponent, not {exponent}")
    return f"pow_{exponent}"


def _exponent_supported(op, inputs) -> bool:
    """Pow's exponent: the base's type or one of _POW_EXPONENTS (others stay on the CPU)."""
    if op.op_type != "Pow" or len(inputs) < 2 or inputs[1] is None or inputs[1].dtype is None:
        return True
    return np.dtype(inputs[1].dtype).name in _POW_EXPONENTS + (np.dtype(inputs[0].dtype).name,)


@recorder(*_KERNELS, family="elementwise", supports=_exponent_supported)
def elementwise(k, op, inputs, outputs):
    views = op.launch(inputs, outputs).views
    shape = tuple(outputs[0].shape)
    mine = View(shape, contiguous_strides(shape))
    name = _pow_kernel(inputs) if op.op_type == "Pow" else _KERNELS[op.op_type]
    present = [i for i, x in enumerate(inputs) if x is not None]
    if len(present) == 1:  # one input: y is a copy of it (max(x, x) keeps -0 and NaN)
        i = present[0]
        binary(k, "max", k.input(i), views[i], k.input(i), views[i], k.output(0), shape)
        return
    i, j = present[0], present[1]
    binary(k, name, k.input(i), views[i], k.input(j), views[j], k.output(0), shape)
    for j in present[2:]:
        binary(k, name, k.output(0), mine, k.input(j), views[j], k.output(0), shape)
    if op.op_type == "Mean":
        count = k.constant(np.array([len(present)], outputs[0].dtype))
        binary(k, "div", k.output(0), mine, count, View(shape, (0,) * len(shape)), k.output(0), shape)


@recorder("Where", family="elementwise", dtypes=_ANY, type_input=1, program_dtype=bits_dtype)
def where(k, op, inputs, outputs):
    """Where moves elements: one program per element size, as data movement does."""
    views = op.launch(inputs, outputs).views
    shape = tuple(outputs[0].shape)
    bits = bits_dtype(outputs[0].dtype)
    dims, strides = merged(shape, *(views[i].strides for i in range(3)), contiguous_strides(shape))
    if not dims:  # one element
        dims, strides = (1,), [(1,)] * 4
    check_rank(dims[:-1])
    args = [a for i in range(3) for a in (k.input(i), k.view(dims[:-1], strides[i][:-1]), np.int64(strides[i][-1]))]
    rows(k, k.kernel("mlrt_where", bits), dims, *args, k.output(0), np.int64(dims[-1]), np.int64(np.prod(dims[:-1])))
