"""StringConcat: elementwise concatenation of two string tensors, numpy-broadcast."""

import operator

import numpy as np

from ._base import broadcast_shape
from ._host import _HostTensorOp, strings

_concat = np.frompyfunc(operator.add, 2, 1)


class StringConcat(_HostTensorOp):
    def run_host(self, values, runtime):
        x, y = self.tensor(values, 0, "X"), self.tensor(values, 1, "Y")
        for name, t in (("X", x), ("Y", y)):
            if t.dtype.kind not in "OUS":
                raise self.bad(f"{name} must be a string tensor, got {t.dtype.name}")
        shape = broadcast_shape(x.shape, y.shape, where=self.where)
        out = np.empty(shape, dtype=object)
        out[...] = _concat(strings(x), strings(y))
        return [out]
