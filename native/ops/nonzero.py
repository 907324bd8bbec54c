"""NonZero: the indices of the non-zero elements, int64 of shape [rank, count], in
row-major order (a scalar gives shape [0, count]).

A host op for now, because its output shape depends on the data; the C kernel
(count, then fill) comes later.
"""

import numpy as np

from ._host import _HostTensorOp


class NonZero(_HostTensorOp):
    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if x.ndim == 0:
            return [np.zeros((0, int(bool(x.item()))), dtype=np.int64)]
        idx = np.nonzero(x)
        out = np.empty((x.ndim, idx[0].size), dtype=np.int64)
        for d, i in enumerate(idx):
            out[d] = i
        return [out]
