"""ConvInteger: int32 y = Conv(x - x_zero_point, w - w_zero_point), Conv's attributes
(groups, strides, dilations, pads, auto_pad).  x and w are int8 / uint8; x's zero
point is per tensor, w's per tensor or per output channel.  Padding is zero in the
shifted (x - x_zero_point) domain, as in onnx.reference.  A constant w is packed once
for the integer product and handed to the kernel after the node's inputs."""

import numpy as np

from ._base import Info
from ._quant import DOUBLE, EIGHT_BIT, check_types, packed_conv_weights, same_type
from .conv import Conv


class ConvInteger(Conv):
    def geometry(self, inputs):
        x, w = self.need(inputs, 0), self.need(inputs, 1)
        xz = inputs[2] if len(inputs) > 2 else None
        wz = inputs[3] if len(inputs) > 3 else None
        check_types(self, [x, w, xz, wz], ("x", "w", "x_zero_point", "w_zero_point"), EIGHT_BIT)
        same_type(self, x, xz, "x and x_zero_point")
        same_type(self, w, wz, "w and w_zero_point")
        if xz is not None and xz.size != 1:
            raise self.fail(f"x_zero_point must be per tensor (one element), got shape {tuple(xz.shape)}")
        if wz is not None and wz.size != 1 and (wz.rank != 1 or w.rank < 1 or wz.shape[0] != w.shape[0]):
            raise self.fail(f"w_zero_point must have 1 or {w.shape[0] if w.rank else '?'} (output channels) elements, "
                            f"got shape {tuple(wz.shape)}")
        return super().geometry([Info(DOUBLE, x.shape), Info(DOUBLE, w.shape)])

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        return [Info(np.dtype(np.int32), tuple(shape))]

    def packed_weights(self, inputs, params: dict):
        return packed_conv_weights(self, inputs[1], params["group"]), 0
