"""QLinearConv: y = saturate(round((Conv(x - x_zp, w - w_zp) + B) * x_scale * w_scale / y_scale) + y_zp).

Conv's attributes; x, w, y int8 / uint8 (y has y_zero_point's type); the scales are
float, x's and y's per tensor, w's per tensor or per output channel (its zero point
likewise); B is an optional int32 bias (scale x_scale * w_scale, zero point 0).
Requantized as onnxruntime does, in float32 (docs/undefined.md): multiplier =
(x_scale * w_scale) / y_scale, y = saturate(round_half_even(float(acc) * multiplier) + y_zp).
A constant w is packed once for the integer product and handed to the kernel after
the node's inputs."""

import numpy as np

from ._base import Info
from ._quant import DOUBLE, EIGHT_BIT, FLOAT, check_types, packed_conv_weights, same_type
from .conv import Conv


class QLinearConv(Conv):
    def geometry(self, inputs):
        ins = list(inputs) + [None] * (9 - len(inputs))
        for i in (0, 1, 3, 4, 6):
            self.need(ins, i)
        x, x_s, x_z, w, w_s, w_z, y_s, y_z, b = ins
        check_types(self, ins, ("x", None, "x_zero_point", "w", None, "w_zero_point", None, "y_zero_point"),
                    EIGHT_BIT)
        same_type(self, x, x_z, "x and x_zero_point")
        same_type(self, w, w_z, "w and w_zero_point")
        for s, name in ((x_s, "x_scale"), (w_s, "w_scale"), (y_s, "y_scale")):
            if np.dtype(s.dtype) != FLOAT:
                raise self.fail(f"{name} has type {np.dtype(s.dtype).name}, expected float")
        if b is not None and np.dtype(b.dtype) != np.int32:
            raise self.fail(f"B has type {np.dtype(b.dtype).name}, expected int32")
        m = w.shape[0] if w.rank else 0
        for t, name in ((x_s, "x_scale"), (x_z, "x_zero_point"), (y_s, "y_scale"), (y_z, "y_zero_point")):
            if t is not None and t.size != 1:
                raise self.fail(f"{name} must be per tensor (one element), got shape {tuple(t.shape)}")
        for t, name in ((w_s, "w_scale"), (w_z, "w_zero_point")):
            if t is not None and t.size != 1 and (t.rank != 1 or t.shape[0] != m):
                raise self.fail(f"{name} must have 1 or {m} (output channels) elements, got shape {tuple(t.shape)}")
        conv_inputs = [Info(DOUBLE, x.shape), Info(DOUBLE, w.shape)]
        if b is not None:
            conv_inputs.append(Info(DOUBLE, b.shape))
        return super().geometry(conv_inputs)

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        y_z = inputs[7] if len(inputs) > 7 else None
        return [Info(np.dtype(y_z.dtype if y_z is not None else inputs[0].dtype), tuple(shape))]

    def packed_weights(self, inputs, params: dict):
        return packed_conv_weights(self, inputs[3], params["group"]), 0
