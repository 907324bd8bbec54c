"""Expand: broadcast the input to a shape (numpy rules, in both directions)."""

from ._base import Info, broadcast_shape, broadcast_view
from ._shape import _Copy, ints


class Expand(_Copy):
    value_inputs = (1,)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        shape = tuple(ints(self.value_of(inputs, 1)))
        if any(d < 0 for d in shape):
            raise self.fail(f"shape {shape} has a negative dimension")
        return [Info(x.dtype, broadcast_shape(x.shape, shape, where=self.where))]

    def view(self, inputs, outputs):
        return broadcast_view(inputs[0].shape, outputs[0].shape)
