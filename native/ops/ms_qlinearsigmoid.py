"""QLinearSigmoid (com.microsoft, as onnxruntime): Y = quantize(sigmoid(dequantize(X))).

X and Y share one type, int8 or uint8; the scales are float and, like the optional
zero points, per tensor.  As onnxruntime, the kernel builds a 256-entry table from the
scales (float math, rounding half to even) and maps X through it; onnxruntime's
sigmoid is a polynomial approximation, so an entry may differ from theirs by one unit."""

import numpy as np

from ._base import Info, Launch, Op
from ._quant import check_unary_quantized


class _QLinearLookup(Op):
    domain = "com.microsoft"
    tolerance = (0, 1)  # (rtol, atol in units of the quantized type)

    def infer(self, inputs):
        ins = check_unary_quantized(self, inputs, "X", "Y")
        x, x_s, x_z, y_s, y_z = ins
        return [Info(np.dtype(x.dtype), tuple(x.shape))]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, self.pack(inputs, outputs))


class QLinearSigmoid(_QLinearLookup):
    pass
