"""Size: the number of elements of the input, an int64 scalar."""

import numpy as np

from ._base import Info, Op
from ._shape import INT64


class Size(Op):
    kernel = None

    def infer(self, inputs):
        x = self.need(inputs, 0)
        return [Info(INT64, (), np.array(x.size, dtype=np.int64))]
