"""Upsample (deprecated at opset 10 in favour of Resize): output length is
floor(length * scale); nearest or n-linear with asymmetric coordinates, nearest
rounding down (the Resize kernel with opset-10 rules).  Scales are an attribute at
opset 7 and an input from opset 9."""

from ._resize import _Resize


class Upsample_7(_Resize):
    attributes = {"mode": "nearest", "scales": None}
    mode_names = ("nearest", "linear")

    def mode(self):
        return "linear" if self.a.mode == "bilinear" else self.a.mode

    def coord_mode(self):
        return "asymmetric"

    def nearest_mode(self):
        return "simple"

    def scales_and_sizes(self, inputs, x):
        if self.a.scales is None:
            raise self.fail("attribute 'scales' is missing")
        return self.a.scales, None, None


class Upsample_9(Upsample_7):
    attributes = {"mode": "nearest"}
    value_inputs = (1,)

    def scales_and_sizes(self, inputs, x):
        scales = self.value_of(inputs, 1)
        if scales is None:
            raise self.fail("input 1 (scales) is required")
        return scales, None, None
