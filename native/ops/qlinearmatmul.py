"""QLinearMatMul: y = saturate(round((a - a_zp) @ (b - b_zp) * a_scale * b_scale / y_scale) + y_zp).

a, b and y are int8 / uint8 (y has y_zero_point's type); each scale shares its zero
point's shape: per tensor, per row of a ((M,) or [..., M, 1]) or per column of b
((N,) or [..., 1, N]); y's are per tensor.  The scales are float (opset 10) or
float / float16 / bfloat16 (21), all one type, converted to float32.  Requantized as
onnxruntime does, in float32 (docs/undefined.md): multiplier = (a_scale * b_scale) /
y_scale, y = saturate(round_half_even(float(acc) * multiplier) + y_zp).  float8
operands are not supported.  A constant 2-D b is packed once for the integer product
and handed to the kernel after the node's inputs (`packed_b` names the input)."""

import numpy as np

from ._base import Info, Launch, Op
from ._quant import EIGHT_BIT, FLOAT, MatMulGeometry, check_types, is_float, packed_matmul_b, same_type


class QLinearMatMul(Op):
    names = ("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point")
    params = "mlrt_qmatmul_params"

    def _geometry(self, inputs):
        ins = list(inputs) + [None] * (8 - len(inputs))
        for i in (0, 1, 3, 4, 6):
            self.need(ins, i)
        a, a_s, a_z, b, b_s, b_z, y_s, y_z = ins
        check_types(self, ins, ("a", None, "a_zero_point", "b", None, "b_zero_point", None, "y_zero_point"),
                    EIGHT_BIT)
        same_type(self, a, a_z, "a and a_zero_point")
        same_type(self, b, b_z, "b and b_zero_point")
        for s, name in ((a_s, "a_scale"), (b_s, "b_scale"), (y_s, "y_scale")):
            if not is_float(s.dtype) or np.dtype(s.dtype) == np.float64 or (
                    self.opset < 21 and np.dtype(s.dtype) != FLOAT):
                raise self.fail(f"{name} has type {np.dtype(s.dtype).name}, expected float"
                                + (", float16 or bfloat16" if self.opset >= 21 else ""))
        same_type(self, a_s, b_s, "a_scale and b_scale")
        same_type(self, a_s, y_s, "a_scale and y_scale")
        for s, z, name in ((a_s, a_z, "a"), (b_s, b_z, "b")):
            if z is not None and tuple(s.shape) != tuple(z.shape) and not (s.size == 1 and z.size == 1):
                raise self.fail(f"{name}_scale {tuple(s.shape)} and {name}_zero_point {tuple(z.shape)} differ in shape")
        if y_s.size != 1 or (y_z is not None and y_z.size != 1):
            raise self.fail("y_scale and y_zero_point must be per tensor (one element)")
        return MatMulGeometry(self, a, b), ins

    def infer(self, inputs):
        g, ins = self._geometry(inputs)
        y_z = ins[7]
        return [Info(np.dtype(y_z.dtype if y_z is not None else ins[0].dtype), g.out)]

    def launch(self, inputs, outputs):
        g, ins = self._geometry(inputs)
        views = {0: g.a_view(), 3: g.b_view(), 1: g.side_view(ins[1], "a", "a_scale"),
                 4: g.side_view(ins[4], "b", "b_scale")}
        if ins[2] is not None:
            views[2] = g.side_view(ins[2], "a", "a_zero_point")
        if ins[5] is not None:
            views[5] = g.side_view(ins[5], "b", "b_zero_point")
        packed = packed_matmul_b(self, ins[3])
        launch = Launch("QLinearMatMul", {"packed_b": len(inputs) if packed is not None else 0}, views)
        if packed is not None:
            launch.extra.append(packed)
        return launch
