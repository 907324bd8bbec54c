"""Unsqueeze: insert size-1 axes at the given positions of the output."""

from ._shape import _Reshape, ints, normalize_axes


class Unsqueeze(_Reshape):
    attributes = {"axes": None}  # before opset 13 the axes are an attribute

    def axes(self, inputs):
        if self.a.axes is None:
            raise self.fail("attribute 'axes' is missing")
        return self.a.axes

    def out_shape(self, inputs, x):
        axes = ints(self.axes(inputs))
        rank = x.rank + len(axes)
        axes = set(normalize_axes(self, axes, rank))
        dims = iter(x.shape)
        return tuple(1 if i in axes else next(dims) for i in range(rank))


class Unsqueeze_13(Unsqueeze):
    attributes = {}
    value_inputs = (1,)

    def axes(self, inputs):
        axes = self.value_of(inputs, 1)
        if axes is None:
            raise self.fail("input 'axes' is required")
        return axes
