"""QLinearGlobalAveragePool (com.microsoft, as onnxruntime): Y = saturate(round((sum(X) - n *
x_zero_point) * (x_scale / (y_scale * n))) + y_zero_point) over each image's n spatial elements.

X is (N, C, spatial...) or, with channels_last, (N, spatial..., C); Y keeps X's rank with
the spatial dims 1.  X and Y share one type, int8 or uint8; scales and zero points per
tensor.  The sum is exact, the rest float, rounding half to even: within one unit of
onnxruntime's result."""

import numpy as np

from ._base import Info, Launch, Op
from ._quant import check_unary_quantized


class QLinearGlobalAveragePool(Op):
    domain = "com.microsoft"
    attributes = {"channels_last": 0}
    params = "mlrt_qlinear_pool_params"
    tolerance = (0, 1)  # (rtol, atol in units of the quantized type)

    def infer(self, inputs):
        ins = check_unary_quantized(self, inputs)
        x, x_s, x_z, y_s, y_z = ins
        if x.rank < 3:
            raise self.fail(f"X must have rank >= 3, got shape {tuple(x.shape)}")
        n, shape = x.shape[0], tuple(x.shape)
        out = (n,) + (1,) * (x.rank - 2) + (shape[-1],) if self.a.channels_last else (n, shape[1]) + (1,) * (x.rank - 2)
        return [Info(np.dtype(x.dtype), out)]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, {"channels_last": int(bool(self.a.channels_last))})
