"""Shared semantics of elementwise operators: same-shape unary ones and
numpy-broadcasting n-ary ones.  Operator files subclass these."""

from __future__ import annotations

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view


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
        if self.same_type and len({np.dtype(i.dtype) for i in present}) > 1:
            raise self.fail("inputs have different element types: "
                            + ", ".join(np.dtype(i.dtype).name for i in present))
        shape = broadcast_shape(*(i.shape for i in present), where=self.where)
        return [Info(np.dtype(self.out_dtype or present[0].dtype), shape)]

    def launch(self, inputs, outputs):
        shape = outputs[0].shape
        views = {k: broadcast_view(i.shape, shape) for k, i in enumerate(inputs) if i is not None}
        return Launch(self.kernel or self.op_type, self.pack(inputs, outputs), views)
