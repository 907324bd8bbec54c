"""Shared semantics of the data-movement operators (Reshape, Transpose, Slice, ...).

Most of them are one strided copy: the output is the input seen through a view
(reshaped, permuted or broadcast), written out contiguously.  `_Copy` hands the C
copy kernel that view and the size of the buffer behind it (so the kernel can check
every element it reaches).  The helpers below read shape
and axis inputs and turn fill values into the bit patterns kernels copy.
"""

from __future__ import annotations

import numpy as np

from ..._errors import InvalidArgument, NotImplemented
from ._base import Alias, AliasKind, Info, Launch, Op, View, contiguous_strides, normalize_axis

INT64 = np.dtype(np.int64)


def ints(value) -> list[int]:
    """A shape/axes/pads value (array, list or scalar) as a list of Python ints;
    InvalidArgument for a tensor that does not hold integers (a string tensor fed there)."""
    a = np.asarray(value)
    if a.dtype.kind not in "iub":
        raise InvalidArgument(f"expected an integer tensor (a shape, axes or pads), got {a.dtype.name} values")
    return [int(v) for v in a.reshape(-1)]


def bits_of(value, dtype) -> int:
    """The little-endian bit pattern of one `dtype` element holding `value`, as an int64."""
    if np.dtype(dtype).itemsize > 8:
        raise NotImplemented(f"{np.dtype(dtype).name} values (more than 8 bytes an element) are not supported here")
    raw = np.asarray(value).astype(dtype).reshape(-1)[:1].view(np.uint8)
    buf = np.zeros(8, np.uint8)
    buf[:raw.size] = raw
    return int(buf.view(np.int64)[0])


def normalize_axes(op: Op, axes, rank: int) -> list[int]:
    """Axes in [0, rank), each at most once."""
    out = [normalize_axis(int(a), rank, op.where) for a in axes]
    if len(set(out)) != len(out):
        raise op.fail(f"axes {list(axes)} repeat an axis")
    return out


def permuted_view(shape, perm) -> View:
    """The view that reads a contiguous tensor of `shape` transposed by `perm`."""
    strides = contiguous_strides(shape)
    return View(tuple(int(shape[p]) for p in perm), tuple(strides[p] for p in perm))


def index_dtype(op: Op, info: Info, what: str = "indices") -> None:
    if np.dtype(info.dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise op.fail(f"{what} must be int32 or int64, not {np.dtype(info.dtype).name}")


class _Copy(Op):
    """The output is input 0 seen through `view()` (default: as is), copied contiguous."""

    params = "mlrt_copy_params"
    moves = (0,)

    def view(self, inputs, outputs) -> View | None:
        """The view of input 0 (non-negative strides) in output order; None: the input as it is."""
        return None

    def launch(self, inputs, outputs):
        view = self.view(inputs, outputs)
        params = {"src_numel": inputs[0].size}
        return Launch(self.kernel or self.op_type, params, {0: view} if view is not None else {})


class _Reshape(_Copy):
    """Same elements in the same order, another shape: subclasses give `out_shape`.  The
    output is the input's bytes (a plan keeps it there; the copy kernel then moves nothing)."""

    aliases = (Alias(AliasKind.WHOLE, output=0, input=0),)

    def out_shape(self, inputs, x: Info) -> tuple[int, ...]:
        raise NotImplementedError

    def infer(self, inputs):
        x = self.need(inputs, 0)
        shape = tuple(int(d) for d in self.out_shape(inputs, x))
        if int(np.prod(shape, dtype=np.int64)) != x.size:
            raise self.fail(f"cannot turn shape {x.shape} into {shape}")
        return [Info(x.dtype, shape)]
