"""QLinearWhere (com.microsoft, as onnxruntime): Z = condition ? requantize(X) : requantize(Y),
the three inputs broadcast as numpy.

X, Y and Z share one type, int8 or uint8; scales and zero points per tensor.  Each side is
mapped through a 256-entry table, round(x_scale * (x - x_zero_point) / z_scale) +
z_zero_point in float, half to even (a copy where its scale and zero point are Z's):
equal to onnxruntime."""

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view
from ._quant import EIGHT_BIT, check_scales, check_types, same_type

BOOL = np.dtype(np.bool_)


class QLinearWhere(Op):
    domain = "com.microsoft"
    tolerance = (0, 0)  # exact

    def _operands(self, inputs):
        ins = list(inputs) + [None] * (9 - len(inputs))
        for i in (0, 1, 2, 4, 5, 7):
            self.need(ins, i)
        c, x, x_s, x_z, y, y_s, y_z, z_s, z_z = ins
        if np.dtype(c.dtype) != BOOL:
            raise self.fail(f"condition has type {np.dtype(c.dtype).name}, expected bool")
        check_types(self, ins, (None, "X", None, "x_zero_point", "Y", None, "y_zero_point", None, "z_zero_point"),
                    EIGHT_BIT)
        for t, name in ((y, "Y"), (x_z, "x_zero_point"), (y_z, "y_zero_point"), (z_z, "z_zero_point")):
            same_type(self, x, t, f"X and {name}")
        check_scales(self, ((x_s, x_z, "x"), (y_s, y_z, "y"), (z_s, z_z, "z")))
        return c, x, y, broadcast_shape(c.shape, x.shape, y.shape, where=self.where)

    def infer(self, inputs):
        _, x, _, shape = self._operands(inputs)
        return [Info(np.dtype(x.dtype), shape)]

    def launch(self, inputs, outputs):
        c, x, y, shape = self._operands(inputs)
        views = {0: broadcast_view(c.shape, shape), 1: broadcast_view(x.shape, shape), 4: broadcast_view(y.shape, shape)}
        return Launch(self.op_type, None, views, type_input=1)
