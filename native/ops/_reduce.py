"""Shared semantics of reductions, arg-reductions, the softmax family and the
normalizations: resolving axes and laying the input out for the C kernels.

Two layouts are handed to kernels:
  - `split_axis`: a contiguous input seen as [outer, n, inner] around one axis;
  - `grouped_view`: a view whose leading dims are the kept ones and whose trailing
    dims (at least one) are reduced, adjacent dims of one kind merged.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ._base import Info, Launch, Op, View, contiguous_strides, normalize_axis
from ._shape import ints

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# the normalizations also take halves (computed on float32 copies where no half kernel exists)
NORM_FLOATS = FLOATS + (np.dtype(np.float16), np.dtype(helper.tensor_dtype_to_np_dtype(TensorProto.BFLOAT16)))


def prod(values) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out


def split_axis(shape, axis: int) -> dict:
    """[outer, n, inner] of a contiguous tensor around `axis`."""
    return {"outer": prod(shape[:axis]), "n": int(shape[axis]), "inner": prod(shape[axis + 1:])}


def grouped_view(shape, reduced, *others) -> tuple[int, View, list[View]]:
    """(n_kept, view of x, views of `others`) with x's kept dims first, then its reduced dims.

    `others` are (shape, strides) pairs of tensors broadcast to x's shape (scale,
    bias); they get the same dim order.  Size-1 dims are dropped, adjacent dims of
    one kind are merged where every operand allows, and a size-1 reduced dim is
    added when nothing is reduced."""
    strides = [contiguous_strides(shape)] + [s for _, s in others]
    dims = []  # [size, reduced, [stride per operand]]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        r = d in reduced
        st = [s[d] for s in strides]
        if dims and dims[-1][1] == r and all(p == q * n for p, q in zip(dims[-1][2], st)):
            dims[-1][0] *= n
            dims[-1][2] = st
        else:
            dims.append([int(n), r, st])
    order = [g for g in dims if not g[1]] + [g for g in dims if g[1]]
    n_kept = sum(1 for g in dims if not g[1])
    if n_kept == len(order):
        order.append([1, True, [0] * len(strides)])
    vshape = tuple(g[0] for g in order)
    views = [View(vshape, tuple(g[2][k] for g in order)) for k in range(len(strides))]
    return n_kept, views[0], views[1:]


class _Reduce(Op):
    """Reduce*: axes from the attribute (old opsets) or from input 1 (newer ones)."""

    attributes = {"axes": None, "keepdims": 1}
    params = "mlrt_reduce_params"
    tolerance = (1e-4, 1e-5)  # float sums accumulate in double (a float32 reference drifts)
    axes_input = False  # versions taking axes as an input also have noop_with_empty_axes

    def _axes(self, inputs, rank):
        if self.axes_input:
            v = self.value_of(inputs, 1)
            axes = None if v is None else ints(v)
            noop = bool(self.a.noop_with_empty_axes)
        else:
            axes, noop = self.a.axes, False
        if not axes:
            return [] if noop else list(range(rank))
        out = [normalize_axis(int(a), rank, self.where) for a in axes]
        if len(set(out)) != len(out):
            raise self.fail(f"axes {list(axes)} repeat an axis")
        return sorted(out)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        axes = self._axes(inputs, x.rank)
        if self.a.keepdims:
            shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
        else:
            shape = tuple(n for d, n in enumerate(x.shape) if d not in axes)
        return [Info(x.dtype, shape)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        n_kept, view, _ = grouped_view(x.shape, set(self._axes(inputs, x.rank)))
        return Launch(self.kernel or self.op_type, {"n_kept": n_kept}, {0: view})


class _ReduceAxesInput(_Reduce):
    """Reduce* from the opset where axes became an optional input."""

    attributes = {"keepdims": 1, "noop_with_empty_axes": 0}
    axes_input = True
    value_inputs = (1,)


class _ArgReduce(Op):
    """ArgMax/ArgMin: int64 indices along one axis."""

    attributes = {"axis": 0, "keepdims": 1, "select_last_index": 0}
    params = "mlrt_argreduce_params"

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank == 0:
            raise self.fail("needs an input of rank 1 or more")
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        if x.shape[axis] == 0 and prod(x.shape[:axis] + x.shape[axis + 1:]) > 0:
            raise self.fail(f"cannot reduce the empty axis {axis} of shape {x.shape}")
        if self.a.keepdims:
            shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
        else:
            shape = x.shape[:axis] + x.shape[axis + 1:]
        return [Info(np.dtype(np.int64), shape)]

    def pack(self, inputs, outputs):
        x = inputs[0]
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        return {**split_axis(x.shape, axis), "select_last_index": int(self.a.select_last_index)}


class _Softmax(Op):
    """Softmax/LogSoftmax/Hardmax.  Before opset 13 the input is coerced to 2-D at
    `axis` (default 1); from 13 the op runs along `axis` (default -1)."""

    attributes = {"axis": 1}
    params = "mlrt_softmax_params"
    coerce_2d = True
    tolerance = (1e-5, 1e-6)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if np.dtype(x.dtype) not in FLOATS and np.dtype(x.dtype).name not in ("float16", "bfloat16"):
            raise self.fail(f"needs a floating-point input, not {np.dtype(x.dtype).name}")
        normalize_axis(self.a.axis, x.rank, self.where)  # (halves run in float32: plan/eager.py)
        if x.rank == 0 and not self.coerce_2d:
            raise self.fail("needs an input of rank 1 or more (from opset 13 the axis is a dimension of it)")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        shape = inputs[0].shape
        axis = normalize_axis(self.a.axis, len(shape), self.where)
        if self.coerce_2d:
            return {"outer": prod(shape[:axis]), "n": prod(shape[axis:]), "inner": 1}
        return split_axis(shape, axis)


class _Softmax13(_Softmax):
    attributes = {"axis": -1}
    coerce_2d = False
