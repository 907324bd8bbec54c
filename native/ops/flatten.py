"""Flatten: to 2-D, (prod(shape[:axis]), prod(shape[axis:]))."""

import numpy as np

from ._shape import _Reshape


class Flatten(_Reshape):
    attributes = {"axis": 1}

    def out_shape(self, inputs, x):
        axis = int(self.a.axis)
        if not -x.rank <= axis <= x.rank:
            raise self.fail(f"axis {axis} is out of range for rank {x.rank}")
        axis += x.rank if axis < 0 else 0
        return (int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))
