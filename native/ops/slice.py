"""Slice: starts/ends/axes/steps per axis, clamped to the dimension (negative steps walk back).

Opset 1-9 take starts/ends/axes as attributes; from 10 they are inputs, plus steps."""

from ._base import Info, View, contiguous_strides
from ._shape import _Copy, ints, normalize_axes


class Slice(_Copy):
    attributes = {"starts": None, "ends": None, "axes": None}

    def spec(self, inputs):
        if self.a.starts is None or self.a.ends is None:
            raise self.fail("attributes 'starts' and 'ends' are required")
        return ints(self.a.starts), ints(self.a.ends), self.a.axes, None

    def resolve(self, inputs):
        """(output shape, view strides, start offset) of the slice."""
        x = self.need(inputs, 0)
        starts, ends, axes, steps = self.spec(inputs)
        axes = list(range(len(starts))) if axes is None else ints(axes)
        steps = [1] * len(starts) if steps is None else ints(steps)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise self.fail(f"starts, ends, axes and steps have different lengths "
                            f"({len(starts)}, {len(ends)}, {len(axes)}, {len(steps)})")
        axes = normalize_axes(self, axes, x.rank)
        shape, strides = list(x.shape), list(contiguous_strides(x.shape))
        view_strides, offset = list(strides), 0
        for start, end, axis, step in zip(starts, ends, axes, steps):
            if step == 0:
                raise self.fail(f"step for axis {axis} is 0")
            dim = x.shape[axis]
            start += dim if start < 0 else 0
            end += dim if end < 0 else 0
            if step > 0:
                start, end = min(max(start, 0), dim), min(max(end, 0), dim)
            else:
                start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
            shape[axis] = max(0, -((end - start) // -step))
            offset += start * strides[axis]
            view_strides[axis] = strides[axis] * step
        if 0 in shape:
            offset = 0
        return tuple(shape), tuple(view_strides), offset

    def infer(self, inputs):
        shape, _, _ = self.resolve(inputs)
        return [Info(inputs[0].dtype, shape)]

    def view(self, inputs, outputs):
        shape, strides, offset = self.resolve(inputs)
        return View(shape, strides), offset


class Slice_10(Slice):
    attributes = {}
    value_inputs = (1, 2, 3, 4)

    def spec(self, inputs):
        return (ints(self.value_of(inputs, 1)), ints(self.value_of(inputs, 2)),
                self.value_of(inputs, 3), self.value_of(inputs, 4))
