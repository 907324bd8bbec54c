"""QuantizeLinear (com.microsoft, as onnxruntime): ai.onnx QuantizeLinear's semantics and
kernel (per tensor or per axis scale, `axis` default 1), with x float32 / float16."""

import numpy as np

from .quantizelinear import QuantizeLinear as _OnnxQuantizeLinear

_X_TYPES = (np.dtype(np.float32), np.dtype(np.float16))


class QuantizeLinear(_OnnxQuantizeLinear):
    domain = "com.microsoft"

    def _types(self, inputs):
        x = self.need(inputs, 0)
        if np.dtype(x.dtype) not in _X_TYPES:
            raise self.fail(f"x has type {np.dtype(x.dtype).name}, expected float32 or float16")
        return super()._types(inputs)
