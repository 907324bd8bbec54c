"""Squeeze: drop the given size-1 axes (all size-1 axes when none are given)."""

from ._shape import _Reshape, ints, normalize_axes


class Squeeze(_Reshape):
    attributes = {"axes": None}  # before opset 13 the axes are an attribute

    def axes(self, inputs):
        return self.a.axes

    def out_shape(self, inputs, x):
        axes = self.axes(inputs)
        if axes is None:
            return tuple(d for d in x.shape if d != 1)
        axes = normalize_axes(self, ints(axes), x.rank)
        for a in axes:
            if x.shape[a] != 1:
                raise self.fail(f"cannot squeeze axis {a} of size {x.shape[a]} (shape {x.shape})")
        return tuple(d for i, d in enumerate(x.shape) if i not in axes)


class Squeeze_13(Squeeze):
    attributes = {}
    value_inputs = (1,)

    def axes(self, inputs):
        return self.value_of(inputs, 1)
