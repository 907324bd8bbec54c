"""ScatterND: y = data, then y[indices[t]] (op)= updates[t], slice by slice.

reduction: none (opset 11+), add and mul (16+), max and min (18+)."""

import numpy as np

from .._lib import enum_value
from ._base import Info, Op
from ._shape import index_dtype
from .scatterelements import REDUCTIONS


class ScatterND(Op):
    attributes = {"reduction": "none"}
    params = "mlrt_scatter_nd_params"

    def infer(self, inputs):
        x, ind, upd = (self.need(inputs, i) for i in range(3))
        index_dtype(self, ind)
        if np.dtype(upd.dtype) != np.dtype(x.dtype):
            raise self.fail(f"updates are {np.dtype(upd.dtype).name}, data is {np.dtype(x.dtype).name}")
        k = ind.shape[-1] if ind.rank else 0
        if ind.rank < 1 or x.rank < 1 or not 1 <= k <= x.rank:
            raise self.fail(f"indices of shape {ind.shape} do not address data of shape {x.shape}")
        want = tuple(ind.shape[:-1]) + x.shape[k:]
        if upd.shape != want:
            raise self.fail(f"updates have shape {upd.shape}, expected {want}")
        if self.a.reduction not in REDUCTIONS:
            raise self.fail(f"reduction '{self.a.reduction}' is not one of {', '.join(REDUCTIONS)}")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        return {"reduction": enum_value(REDUCTIONS[self.a.reduction])}
