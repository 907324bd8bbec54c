"""Slice: starts/ends/axes/steps per axis, clamped to the dimension (negative steps walk back).

Opset 1-9 take starts/ends/axes as attributes; from 10 they are inputs, plus steps.
The kernel gets, per axis, the first index read and the step; the output shape says
how many (it builds the strided view itself and checks it against the input)."""

from ._base import Info, Op
from ._shape import ints, normalize_axes


class Slice(Op):
    attributes = {"starts": None, "ends": None, "axes": None}
    params = "mlrt_slice_params"
    moves = (0,)

    def spec(self, inputs):
        if self.a.starts is None or self.a.ends is None:
            raise self.fail("attributes 'starts' and 'ends' are required")
        return ints(self.a.starts), ints(self.a.ends), self.a.axes, None

    def resolve(self, inputs):
        """(output shape, first index per axis, step per axis)."""
        x = self.need(inputs, 0)
        starts, ends, axes, steps = self.spec(inputs)
        axes = list(range(len(starts))) if axes is None else ints(axes)
        steps = [1] * len(starts) if steps is None else ints(steps)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise self.fail(f"starts, ends, axes and steps have different lengths "
                            f"({len(starts)}, {len(ends)}, {len(axes)}, {len(steps)})")
        axes = normalize_axes(self, axes, x.rank)
        shape, first, step_of = list(x.shape), [0] * x.rank, [1] * x.rank
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
            first[axis], step_of[axis] = (start, step) if shape[axis] else (0, 1)
        return tuple(shape), first, step_of

    def infer(self, inputs):
        shape, _, _ = self.resolve(inputs)
        return [Info(inputs[0].dtype, shape)]

    def pack(self, inputs, outputs):
        _, first, steps = self.resolve(inputs)
        return {"starts": first, "steps": steps}


class Slice_10(Slice):
    attributes = {}
    value_inputs = (1, 2, 3, 4)

    def spec(self, inputs):
        return (ints(self.value_of(inputs, 1)), ints(self.value_of(inputs, 2)),
                self.value_of(inputs, 3), self.value_of(inputs, 4))
