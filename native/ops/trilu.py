"""Trilu: keep the upper (or lower) triangle of the last two axes from diagonal k."""

import numpy as np

from ._base import Info, Op


class Trilu(Op):
    attributes = {"upper": 1}
    params = "mlrt_trilu_params"

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank < 2:
            raise self.fail(f"input must have rank >= 2, not {x.rank}")
        if len(inputs) > 1 and inputs[1] is not None:
            k = inputs[1]
            if k.size != 1 or np.dtype(k.dtype) != np.dtype(np.int64):
                raise self.fail(f"k must be one int64, not {np.dtype(k.dtype).name} of shape {k.shape}")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        return {"upper": 1 if self.a.upper else 0}
