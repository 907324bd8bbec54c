"""DynamicQuantizeMatMul (com.microsoft, as onnxruntime): float A is quantized to uint8
per tensor with onnxruntime's dynamic parameters (the range [min(A, 0), max(A, 0)],
scale = range / 255 or 1 when it is empty, zero point = round(clamp(-min / scale, 0,
255))), then Y = MatMulIntegerToFloat(A_q, B, a_scale, b_scale, a_zp, b_zero_point, bias).

B is int8 / uint8; b_scale (float32) and b_zero_point per tensor or per column of B;
bias float32 (N,); numpy.matmul shapes."""

import numpy as np

from ._base import Launch
from ._quant import FLOAT
from .ms_matmulintegertofloat import _QuantMatMulToFloat


class DynamicQuantizeMatMul(_QuantMatMulToFloat):
    slots = {"A": 0, "B": 1, "b_scale": 2, "b_zero_point": 3, "bias": 4}

    def _geometry(self, inputs):
        a = self.need(inputs, 0)
        if np.dtype(a.dtype) != FLOAT:
            raise self.fail(f"A has type {np.dtype(a.dtype).name}, expected float32")
        return super()._geometry(inputs)

    def launch(self, inputs, outputs):
        g = self._geometry(inputs)
        return Launch("DynamicQuantizeMatMul", None, self._views(inputs, g))
