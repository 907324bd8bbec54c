"""MaxPool: the largest element of each window (NaN is skipped); optional int64
Indices output (flat positions in X, row- or column-major by storage_order)."""

import numpy as np

from ._base import Info
from ._pool import _Pool


class MaxPool(_Pool):
    attributes = {**_Pool.attributes, "storage_order": 0}

    def infer(self, inputs):
        outs = super().infer(inputs)
        if len(self.node.output) > 1 and self.node.output[1]:
            outs.append(Info(np.dtype(np.int64), outs[0].shape))
        return outs

    def pack(self, inputs, outputs):
        return {**super().pack(inputs, outputs), "storage_order": int(self.a.storage_order)}
