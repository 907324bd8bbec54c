"""MatMulIntegerToFloat (com.microsoft, as onnxruntime): float Y = (A - a_zero_point) @
(B - b_zero_point) * (a_scale * b_scale) + bias, numpy.matmul shapes.

A and B are int8 / uint8; a_scale and a_zero_point are per tensor (one element), b_scale
and b_zero_point (same shape) per tensor or per column of B ((N,) or [..., 1, N]);
bias is float (N,).  The int32 product is MatMulInteger's (a constant 2-D B packed once,
as there); the scales are multiplied in float32.  Only float32 scales and output."""

import numpy as np

from ._base import Info, Launch, Op
from ._quant import EIGHT_BIT, FLOAT, MatMulGeometry, check_types, packed_matmul_b, same_type


class _QuantMatMulToFloat(Op):
    """Shared checks of MatMulIntegerToFloat and DynamicQuantizeMatMul: `slots` maps
    the names A, B, b_scale, b_zero_point, bias (and a_scale, a_zero_point) to input indices."""

    domain = "com.microsoft"
    tolerance = (1e-5, 1e-5)
    slots: dict = {}

    def _get(self, inputs, name):
        i = self.slots.get(name)
        return inputs[i] if i is not None and i < len(inputs) else None

    def _float(self, t, name, scalar=False):
        if t is not None and np.dtype(t.dtype) != FLOAT:
            raise self.fail(f"{name} has type {np.dtype(t.dtype).name}, expected float32")
        if t is not None and scalar and t.size != 1:
            raise self.fail(f"{name} of shape {tuple(t.shape)} must be per tensor (one element)")

    def _geometry(self, inputs):
        for name in ("A", "B", "b_scale") + (("a_scale",) if "a_scale" in self.slots else ()):
            self.need(inputs, self.slots[name])
        a, b, bs, bz, bias = (self._get(inputs, n) for n in ("A", "B", "b_scale", "b_zero_point", "bias"))
        check_types(self, [b, bz], ("B", "b_zero_point"), EIGHT_BIT)
        same_type(self, b, bz, "B and b_zero_point")
        self._float(bs, "b_scale")
        if bz is not None and tuple(bz.shape) != tuple(bs.shape) and not (bz.size == 1 and bs.size == 1):
            raise self.fail(f"b_zero_point {tuple(bz.shape)} and b_scale {tuple(bs.shape)} differ in shape")
        g = MatMulGeometry(self, a, b)
        if bias is not None:
            self._float(bias, "bias")
            if tuple(bias.shape) != (g.sb[-1],):
                raise self.fail(f"bias of shape {tuple(bias.shape)} must be 1-D with N = {g.sb[-1]} elements")
        return g

    def infer(self, inputs):
        return [Info(FLOAT, self._geometry(inputs).out)]

    def _views(self, inputs, g):
        views = {self.slots["A"]: g.a_view(), self.slots["B"]: g.b_view(),
                 self.slots["b_scale"]: g.side_view(self._get(inputs, "b_scale"), "b", "b_scale")}
        for name, side in (("a_zero_point", "a"), ("b_zero_point", "b")):
            t = self._get(inputs, name)
            if t is not None:
                views[self.slots[name]] = g.side_view(t, side, name)
        return views


class MatMulIntegerToFloat(_QuantMatMulToFloat):
    slots = {"A": 0, "B": 1, "a_scale": 2, "b_scale": 3, "a_zero_point": 4, "b_zero_point": 5, "bias": 6}
    params = "mlrt_qmatmul_params"

    def _geometry(self, inputs):
        a, az, a_s = (self._get(inputs, n) for n in ("A", "a_zero_point", "a_scale"))
        check_types(self, [a, az], ("A", "a_zero_point"), EIGHT_BIT)
        same_type(self, a, az, "A and a_zero_point")
        self._float(a_s, "a_scale", scalar=True)
        if az is not None and az.size != 1:
            raise self.fail(f"a_zero_point of shape {tuple(az.shape)} must be per tensor (one element)")
        return super()._geometry(inputs)

    def launch(self, inputs, outputs):
        g = self._geometry(inputs)
        packed = packed_matmul_b(self, inputs[1])
        launch = Launch("MatMulIntegerToFloat", {"packed_b": len(inputs) if packed is not None else 0},
                        self._views(inputs, g))
        if packed is not None:
            launch.extra.append(packed)
        return launch
