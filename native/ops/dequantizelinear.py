"""DequantizeLinear: y = (x - x_zero_point) * x_scale.

Per tensor, per axis (opset 13) or blocked (`block_size`, opset 21) scales, as in
QuantizeLinear.  x is int8 / uint8 / int16 / uint16 / int32 / int4 / uint4 / int2 /
uint2, or float8 / float4 E2M1 (whose zero point, if any, is ignored: zero for float8);
y has the scale's type, or `output_dtype` (opset 23).  As in onnx.reference the
product is formed in float32 (in float64 for int32 x with a zero point), then rounded
to y's type."""

import numpy as np
from onnx import TensorProto

from ._base import Info, Op
from ._quant import DEQUANTIZABLE, INT32, attribute_type, block_params, is_float, refuse_unsupported


class DequantizeLinear(Op):
    attributes = {"axis": 1, "block_size": 0, "output_dtype": 0}
    params = "mlrt_quantize_params"

    def _types(self, inputs):
        x, scale = self.need(inputs, 0), self.need(inputs, 1)
        zp = inputs[2] if len(inputs) > 2 else None
        refuse_unsupported(self, x.dtype, DEQUANTIZABLE, "x")
        if zp is not None and np.dtype(zp.dtype) != np.dtype(x.dtype):
            raise self.fail(f"the zero point has type {np.dtype(zp.dtype).name}, x has {np.dtype(x.dtype).name}")
        if not is_float(scale.dtype):
            raise self.fail(f"x_scale has type {np.dtype(scale.dtype).name}, expected a float type")
        y_dtype = attribute_type(self, self.a.output_dtype, "output_dtype") if self.a.output_dtype else np.dtype(scale.dtype)
        if not is_float(y_dtype):
            raise self.fail(f"output_dtype {y_dtype.name} is not a floating type")
        return x, scale, zp, y_dtype

    def infer(self, inputs):
        x, _, _, y_dtype = self._types(inputs)
        return [Info(y_dtype, tuple(x.shape))]

    def pack(self, inputs, outputs):
        x, scale, zp, _ = self._types(inputs)
        fields = block_params(self, x, scale, zp, self.a.axis, self.a.block_size)
        wide = np.dtype(x.dtype) == INT32 and zp is not None
        fields["compute_dtype"] = TensorProto.DOUBLE if wide else TensorProto.FLOAT
        return fields
