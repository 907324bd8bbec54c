"""Shared semantics of elementwise operators: same-shape unary ones and
numpy-broadcasting n-ary ones.  Operator files subclass these."""

from __future__ import annotations

import numpy as np

from ... import _errors
from .._lib import enum_value, onnx_type
from ._base import Info, Launch, Op, broadcast_shape, broadcast_view, normalize_axis


class _Unary(Op):
    """y has x's shape and dtype."""

    def infer(self, inputs):
        x = self.need(inputs, 0)
        return [Info(x.dtype, x.shape)]


class _Broadcast(Op):
    """Inputs broadcast together; the kernel sees every input as a view of y's shape."""

    same_type = True         # all inputs must share one element type
    out_dtype = None         # fixed output dtype (e.g. bool for comparisons), else the inputs'

    def infer(self, inputs):
        present = [i for i in inputs if i is not None]
        if not present:
            raise self.fail("needs at least one input")
        if len(present) < len(inputs):  # (as onnxruntime: no input of these is optional)
            raise self.fail(f"input {inputs.index(None)} is empty: every input of {self.op_type} must be given")
        if self.same_type and len({np.dtype(i.dtype) for i in present}) > 1:
            raise self.fail("inputs have different element types: "
                            + ", ".join(np.dtype(i.dtype).name for i in present))
        shape = broadcast_shape(*(i.shape for i in present), where=self.where)
        return [Info(np.dtype(self.out_dtype or present[0].dtype), shape)]

    def launch(self, inputs, outputs):
        shape = outputs[0].shape
        views = {k: broadcast_view(i.shape, shape) for k, i in enumerate(inputs) if i is not None}
        return Launch(self.kernel or self.op_type, self.pack(inputs, outputs), views)


class _Predicate(_Unary):
    """y is a bool tensor of x's shape (IsNaN, IsInf)."""

    def infer(self, inputs):
        x = self.need(inputs, 0)
        return [Info(np.dtype(np.bool_), x.shape)]


class _Activation(_Unary):
    """Same-shape activations whose kernel takes `mlrt_activation_params`: the op's
    alpha/beta/gamma attributes (those it has) go into the struct."""

    params = "mlrt_activation_params"

    def pack(self, inputs, outputs):
        return {k: float(getattr(self.a, k)) for k in ("alpha", "beta", "gamma") if k in self.attributes}


class _Compare(_Broadcast):
    """Broadcasting ops with a bool result (comparisons, And/Or/Xor)."""

    out_dtype = np.bool_


class _LegacyBroadcast(_Broadcast):
    """Binary ops before opset 7: with `broadcast=1` and an `axis`, B's dims line up
    with A's starting at `axis` (otherwise numpy's rules, which cover the rest)."""

    attributes = {"broadcast": 0, "axis": None}

    def _aligned(self, inputs):
        if not self.a.broadcast or self.a.axis is None or len(inputs) < 2 or inputs[0] is None or inputs[1] is None:
            return inputs
        a, b = inputs[0], inputs[1]
        axis = normalize_axis(self.a.axis, a.rank, self.where)
        if axis + b.rank > a.rank:
            raise self.fail(f"B of shape {tuple(b.shape)} does not fit A of shape {tuple(a.shape)} at axis {axis}")
        shape = (1,) * axis + tuple(b.shape) + (1,) * (a.rank - axis - b.rank)
        value = b.value.reshape(shape) if b.value is not None else None
        return [a, Info(b.dtype, shape, value), *inputs[2:]]

    def infer(self, inputs):
        return super().infer(self._aligned(inputs))

    def launch(self, inputs, outputs):
        return super().launch(self._aligned(inputs), outputs)


ROUND_MODES = {"up": "MLRT_ROUND_UP", "down": "MLRT_ROUND_DOWN", "nearest": "MLRT_ROUND_NEAREST"}  # include/mlrt.h


class _Converting(Op):
    """Cast and CastLike: y is x converted to another element type (Cast kernel);
    `saturate` and `round_mode` only matter for the float8 types and float8e8m0."""

    kernel = "Cast"
    params = "mlrt_cast_params"

    def pack(self, inputs, outputs):
        mode = self.a.round_mode
        mode = mode.decode() if isinstance(mode, bytes) else str(mode)
        if mode not in ROUND_MODES:
            raise self.fail(f"round_mode {mode!r} is not one of {', '.join(ROUND_MODES)}")
        return {"saturate": int(bool(self.a.saturate)), "round_mode": enum_value(ROUND_MODES[mode])}

    def _converted(self, x: Info, to) -> Info:
        """y's Info; NotImplemented when the C core has no element type for x or y."""
        for dtype in (x.dtype, to):
            if onnx_type(dtype) == 0:
                raise _errors.NotImplemented(f"{self.where}: casting {np.dtype(x.dtype).name} to {np.dtype(to).name} "
                                     f"is not supported ({np.dtype(dtype).name} has no C element type)")
        return Info(np.dtype(to), x.shape)
