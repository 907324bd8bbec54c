"""Where: y = x where condition else y; the three inputs broadcast together,
condition is bool, x and y share the output's type."""

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view


class Where(Op):
    moves = (1, 2)

    def infer(self, inputs):
        c, x, y = (self.need(inputs, k) for k in range(3))
        if np.dtype(c.dtype) != np.bool_:
            raise self.fail(f"condition must be bool, not {np.dtype(c.dtype).name}")
        if np.dtype(x.dtype) != np.dtype(y.dtype):
            raise self.fail(f"x and y have different types: {np.dtype(x.dtype).name}, {np.dtype(y.dtype).name}")
        return [Info(x.dtype, broadcast_shape(c.shape, x.shape, y.shape, where=self.where))]

    def launch(self, inputs, outputs):
        shape = outputs[0].shape
        views = {k: broadcast_view(i.shape, shape) for k, i in enumerate(inputs)}
        return Launch("Where", None, views, type_input=1)
