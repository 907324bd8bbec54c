"""QLinearAdd (com.microsoft, as onnxruntime): C = saturate(round(A_scale / C_scale * (A - A_zero_point)
+ B_scale / C_scale * (B - B_zero_point) + C_zero_point)).

A, B and C share one type, int8 or uint8; the scales are float and, like the optional
zero points, per tensor (one element); A and B broadcast as numpy.  Computed in float in
onnxruntime's order (fused multiply-adds, the zero points folded into one constant,
rounding half to even after adding C_zero_point): equal to onnxruntime's results in the
tests; one unit is allowed where its vectorised paths round a float step differently."""

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view
from ._quant import EIGHT_BIT, check_scales, check_types, same_type


class _QLinearBinary(Op):
    domain = "com.microsoft"
    tolerance = (0, 1)  # (rtol, atol in units of the quantized type)

    def _operands(self, inputs):
        ins = list(inputs) + [None] * (8 - len(inputs))
        for i in (0, 1, 3, 4, 6):
            self.need(ins, i)
        a, a_s, a_z, b, b_s, b_z, c_s, c_z = ins
        check_types(self, ins, ("A", None, "A_zero_point", "B", None, "B_zero_point", None, "C_zero_point"), EIGHT_BIT)
        same_type(self, a, b, "A and B")
        for z, name in ((a_z, "A_zero_point"), (b_z, "B_zero_point"), (c_z, "C_zero_point")):
            same_type(self, a, z, f"A and {name}")
        check_scales(self, ((a_s, a_z, "A"), (b_s, b_z, "B"), (c_s, c_z, "C")))
        return a, b

    def infer(self, inputs):
        a, b = self._operands(inputs)
        return [Info(np.dtype(a.dtype), broadcast_shape(a.shape, b.shape, where=self.where))]

    def launch(self, inputs, outputs):
        a, b = self._operands(inputs)
        shape = outputs[0].shape
        return Launch(self.op_type, None, {0: broadcast_view(a.shape, shape), 3: broadcast_view(b.shape, shape)})


class QLinearAdd(_QLinearBinary):
    pass
