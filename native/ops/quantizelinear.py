"""QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), rounding half to even.

The scale (and zero point, same shape) is per tensor (one element), per axis (1-D
along `axis`, opset 13) or blocked (`block_size`, opset 21: x's shape with `axis`
divided into blocks).  y's type is the zero point's, else `output_dtype` (21), else
uint8.  As in onnx.reference, x / scale is computed in numpy's promoted type of the
two, or in `precision` (23).  Outputs int8 / uint8 / int16 / uint16 / int4 / uint4 /
int2 / uint2 saturate to their range; float8 outputs take x / scale without the zero
point, converted with `saturate` (opset 19: out of range -> the largest finite
value, else inf / NaN); float4 E2M1 takes x / scale + zero point (always saturating)."""

import numpy as np

from .._lib import onnx_type
from ._base import Info, Op
from ._quant import (QUANTIZED, UINT8, attribute_type, block_params, compute_type, is_float,
                     refuse_unsupported)


class QuantizeLinear(Op):
    attributes = {"axis": 1, "saturate": 1, "block_size": 0, "output_dtype": 0, "precision": 0}
    params = "mlrt_quantize_params"

    def _types(self, inputs):
        x, scale = self.need(inputs, 0), self.need(inputs, 1)
        zp = inputs[2] if len(inputs) > 2 else None
        if not (is_float(x.dtype) or np.dtype(x.dtype) == np.int32):
            raise self.fail(f"x has type {np.dtype(x.dtype).name}, expected a float type or int32")
        if not (is_float(scale.dtype) or np.dtype(scale.dtype) == np.int32):
            raise self.fail(f"y_scale has type {np.dtype(scale.dtype).name}, expected a float type")
        wanted = attribute_type(self, self.a.output_dtype, "output_dtype") if self.a.output_dtype else None
        if zp is not None:
            if wanted is not None and np.dtype(zp.dtype) != wanted:
                raise self.fail(f"output_dtype {wanted.name} differs from the zero point's type "
                                f"{np.dtype(zp.dtype).name}")
            wanted = np.dtype(zp.dtype)
        y_dtype = wanted if wanted is not None else UINT8
        refuse_unsupported(self, y_dtype, QUANTIZED, "the output")
        return x, scale, zp, y_dtype

    def infer(self, inputs):
        x, _, _, y_dtype = self._types(inputs)
        return [Info(y_dtype, tuple(x.shape))]

    def pack(self, inputs, outputs):
        x, scale, zp, _ = self._types(inputs)
        fields = block_params(self, x, scale, zp, self.a.axis, self.a.block_size)
        if self.a.precision:
            precision = attribute_type(self, self.a.precision, "precision")
            if not is_float(precision):
                raise self.fail(f"precision {precision.name} is not a floating type")
            fields["compute_dtype"] = onnx_type(precision)
        else:
            fields["compute_dtype"] = compute_type(x.dtype, scale.dtype)
        fields["saturate"] = int(bool(self.a.saturate))
        return fields
