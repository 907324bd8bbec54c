"""ConvIntegerToFloat (com.microsoft domain, mlrt's own: onnxruntime has no such operator):
float y = activation(float32(ConvInteger(x, w, x_zero_point, w_zero_point)) * (x_scale *
w_scale) + bias).

What native/optimizer/fuse_conv_integer_to_float.py makes of the chain quantize_dynamic
writes after each ConvInteger (Cast to float, Mul by the product of the scales, Add of
the bias, then Relu or Clip), so the integer sums become the float outputs as they are
stored.  Inputs: x, w (int8 / uint8, as ConvInteger), x_scale (one float), w_scale (one
float, or one per output channel), x_zero_point, w_zero_point (optional, as
ConvInteger), bias (optional, float, one per output channel).  Attributes: Conv's, and
activation "" (none), "Relu" or "Clip" with activation_params (min, max).  Each step is a
float32 operation rounded on its own, in the chain's order (the scales' product first),
so the output is the chain's bit for bit.  A constant w is packed once, as ConvInteger's."""

import numpy as np

from ._base import Info
from ._quant import FLOAT
from .conv import Conv
from .convinteger import ConvInteger
from .fusedconv import activation_params


class ConvIntegerToFloat(ConvInteger):
    domain = "com.microsoft"
    attributes = {**Conv.attributes, "activation": "", "activation_params": None}
    tolerance = (1e-5, 1e-5)
    # activation name -> (enum mlrt_conv_activation constant, default parameters)
    ACTIVATIONS = {"": ("MLRT_CONV_ACT_NONE", ()), "Relu": ("MLRT_CONV_ACT_RELU", ()),
                   "Clip": ("MLRT_CONV_ACT_CLIP", (float("-inf"), float("inf")))}

    def geometry(self, inputs):
        ins = list(inputs) + [None] * (7 - len(inputs))
        for i in range(4):
            self.need(ins, i)
        x, w, x_s, w_s, x_z, w_z, bias = ins
        shape, params = super().geometry([x, w, x_z, w_z])
        m = shape[1]
        for t, name, sizes in ((x_s, "x_scale", (1,)), (w_s, "w_scale", (1, m)), (bias, "bias", (m,))):
            if t is None:
                continue
            if np.dtype(t.dtype) != FLOAT:
                raise self.fail(f"{name} has type {np.dtype(t.dtype).name}, expected float32")
            if t.size not in sizes or (t.size > 1 and t.rank != 1):
                raise self.fail(f"{name} must have {' or '.join(map(str, sizes))} element(s) (1-D), "
                                f"got shape {tuple(t.shape)}")
        return shape, {**params, **activation_params(self, self.ACTIVATIONS)}

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        return [Info(FLOAT, tuple(shape))]
