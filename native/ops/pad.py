"""Pad: constant, reflect, edge (and wrap, opset 19) padding; negative pads crop.

Pads are [begin_0, ..., begin_n, end_0, ..., end_n]: an attribute `paddings` (opset
1) or `pads` (2-10), input 1 from opset 11 (with the constant as input 2), and from
opset 18 an optional `axes` input saying which axes the pads are for.  Cropping
happens before padding, so reflect/edge/wrap read the kept elements."""


from .._lib import enum_value
from ._base import Info, Op
from ._shape import bits_of, ints, normalize_axes

# ONNX attribute strings -> the constants of kernels/pad.h (the numbers live there)
MODES = {"constant": "MLRT_PAD_CONSTANT", "reflect": "MLRT_PAD_REFLECT", "edge": "MLRT_PAD_EDGE",
         "wrap": "MLRT_PAD_WRAP"}


class Pad(Op):
    attributes = {"paddings": None, "mode": "constant", "value": 0.0}
    params = "mlrt_pad_params"

    def pads(self, inputs, x) -> list[int]:
        if self.a.paddings is None:
            raise self.fail("attribute 'paddings' is missing")
        return ints(self.a.paddings)

    def constant(self, x):
        return self.a.value

    def resolve(self, inputs):
        """Per axis: (first input index kept, how many kept, padding before)."""
        x = self.need(inputs, 0)
        pads = self.pads(inputs, x)
        axes = self.axes(inputs, x)
        if len(pads) != 2 * len(axes):
            raise self.fail(f"{len(pads)} pads for {len(axes)} axes")
        if self.a.mode not in MODES:
            raise self.fail(f"mode '{self.a.mode}' is not one of {', '.join(MODES)}")
        plan = [(0, n, 0) for n in x.shape]
        for i, axis in enumerate(axes):
            b, e, n = pads[i], pads[len(axes) + i], x.shape[axis]
            keep = n - max(-b, 0) - max(-e, 0)
            if keep < 0:
                raise self.fail(f"pads ({b}, {e}) crop more than the {n} elements of axis {axis}")
            if keep == 0 and self.a.mode != "constant" and max(b, 0) + max(e, 0) > 0:
                raise self.fail(f"mode '{self.a.mode}' cannot pad axis {axis}: it keeps no elements")
            plan[axis] = (max(-b, 0), keep, max(b, 0))
        return x, pads, axes, plan

    def axes(self, inputs, x) -> list[int]:
        return list(range(x.rank))

    def infer(self, inputs):
        x, pads, axes, plan = self.resolve(inputs)
        shape = list(x.shape)
        for i, axis in enumerate(axes):
            shape[axis] = x.shape[axis] + pads[i] + pads[len(axes) + i]
        return [Info(x.dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        x, _, _, plan = self.resolve(inputs)
        value = self.constant(x)
        return {"mode": enum_value(MODES[self.a.mode]), "src_start": [p[0] for p in plan],
                "src_len": [p[1] for p in plan], "pad_begin": [p[2] for p in plan],
                "value_bits": bits_of(value if value is not None else 0, x.dtype)}


class Pad_2(Pad):
    attributes = {"pads": None, "mode": "constant", "value": 0.0}

    def pads(self, inputs, x):
        if self.a.pads is None:
            raise self.fail("attribute 'pads' is missing")
        return ints(self.a.pads)


class Pad_11(Pad):
    attributes = {"mode": "constant"}
    value_inputs = (1,)

    def pads(self, inputs, x):
        return ints(self.value_of(inputs, 1))

    def constant(self, x):
        return 0  # input 2, when given, is read by the kernel at run time


class Pad_18(Pad_11):
    value_inputs = (1, 3)

    def axes(self, inputs, x):
        axes = self.value_of(inputs, 3)
        return list(range(x.rank)) if axes is None else normalize_axes(self, ints(axes), x.rank)
