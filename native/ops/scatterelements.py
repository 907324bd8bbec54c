"""ScatterElements: y = data, then y[i with i[axis] = indices[i]] (op)= updates[i].

reduction: none (opset 11+), add and mul (16+), max and min (18+)."""

import numpy as np

from .._lib import enum_value
from ._base import Info, Op, normalize_axis
from ._shape import index_dtype

# ONNX attribute strings -> the constants of kernels/scatter.h (the numbers live there)
REDUCTIONS = {"none": "MLRT_SCATTER_NONE", "add": "MLRT_SCATTER_ADD", "mul": "MLRT_SCATTER_MUL",
              "max": "MLRT_SCATTER_MAX", "min": "MLRT_SCATTER_MIN"}


class ScatterElements(Op):
    attributes = {"axis": 0, "reduction": "none"}
    params = "mlrt_scatter_elements_params"

    def infer(self, inputs):
        x, ind, upd = (self.need(inputs, i) for i in range(3))
        index_dtype(self, ind)
        axis = normalize_axis(int(self.a.axis), x.rank, self.where)
        if np.dtype(upd.dtype) != np.dtype(x.dtype):
            raise self.fail(f"updates are {np.dtype(upd.dtype).name}, data is {np.dtype(x.dtype).name}")
        if ind.shape != upd.shape or ind.rank != x.rank or any(
                i > n for d, (i, n) in enumerate(zip(ind.shape, x.shape)) if d != axis):
            raise self.fail(f"indices {ind.shape} and updates {upd.shape} do not fit data of shape {x.shape}")
        if self.a.reduction not in REDUCTIONS:
            raise self.fail(f"reduction '{self.a.reduction}' is not one of {', '.join(REDUCTIONS)}")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        return {"axis": normalize_axis(int(self.a.axis), inputs[0].rank, self.where),
                "reduction": enum_value(REDUCTIONS[self.a.reduction])}
