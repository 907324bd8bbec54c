"""OneHot: a new axis of size depth holding on_value at each index, off_value elsewhere.

Negative indices count from the end; indices outside [-depth, depth) give a row of
off_value (not an error, as the spec says)."""

import numpy as np

from ._base import Info, Op, normalize_axis


class OneHot(Op):
    attributes = {"axis": -1}
    params = "mlrt_one_hot_params"
    value_inputs = (1,)

    def resolve(self, inputs):
        ind = self.need(inputs, 0)
        values = self.need(inputs, 2)
        depth = np.asarray(self.value_of(inputs, 1))
        if depth is None or depth.size != 1:
            raise self.fail("depth must be one number")
        depth = int(depth.reshape(-1)[0])
        if depth < 0:
            raise self.fail(f"depth is {depth}")
        if values.size != 2:
            raise self.fail(f"values must be [off_value, on_value], not of shape {values.shape}")
        axis = normalize_axis(int(self.a.axis), ind.rank + 1, self.where)
        return ind, values, depth, axis

    def infer(self, inputs):
        ind, values, depth, axis = self.resolve(inputs)
        shape = list(ind.shape)
        shape.insert(axis, depth)
        return [Info(values.dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        _, _, depth, axis = self.resolve(inputs)
        return {"axis": axis, "depth": depth}
