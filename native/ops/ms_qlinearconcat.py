"""QLinearConcat (com.microsoft, as onnxruntime): Y = Concat(requantize(X_i), axis); inputs
Y_scale, Y_zero_point, then (X_i, X_i_scale, X_i_zero_point) for each piece.

All tensors share Y_zero_point's type, int8 or uint8; scales and zero points per tensor.
Each piece goes through a 256-entry table, round(X_scale * (x - X_zero_point) / Y_scale)
+ Y_zero_point in float rounding half to even (the identity where its scale and zero point
are Y's), as onnxruntime: within one unit of its result."""

import numpy as np

from ._base import REQUIRED, Info, Launch, Op, normalize_axis
from ._quant import EIGHT_BIT, check_scales, check_types, same_type


class QLinearConcat(Op):
    domain = "com.microsoft"
    attributes = {"axis": REQUIRED}
    params = "mlrt_concat_params"
    tolerance = (0, 1)  # (rtol, atol in units of the quantized type)

    def _geometry(self, inputs):
        y_s, y_z = self.need(inputs, 0), self.need(inputs, 1)
        if len(inputs) < 5 or (len(inputs) - 2) % 3:
            raise self.fail(f"needs Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got "
                            f"{len(inputs)} inputs")
        check_types(self, [y_z], ("Y_zero_point",), EIGHT_BIT)
        check_scales(self, ((y_s, y_z, "Y"),))
        pieces = []
        for k in range(2, len(inputs), 3):
            x, x_s, x_z = (self.need(inputs, k + i) for i in range(3))
            same_type(self, y_z, x, f"Y_zero_point and input {k}")
            same_type(self, y_z, x_z, f"Y_zero_point and input {k + 2}")
            check_scales(self, ((x_s, x_z, f"input {k} X"),))
            pieces.append(x)
        rank = pieces[0].rank
        if rank == 0:
            raise self.fail("cannot concatenate scalars")
        axis = normalize_axis(int(self.a.axis), rank, self.where)
        first = tuple(pieces[0].shape)
        for x in pieces:
            shape = tuple(x.shape)
            if len(shape) != rank or shape[:axis] + shape[axis + 1:] != first[:axis] + first[axis + 1:]:
                raise self.fail(f"shapes {first} and {shape} differ off axis {axis}")
        out = first[:axis] + (sum(x.shape[axis] for x in pieces),) + first[axis + 1:]
        return axis, Info(np.dtype(y_z.dtype), out)

    def infer(self, inputs):
        return [self._geometry(inputs)[1]]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, {"axis": self._geometry(inputs)[0]}, type_input=1)
