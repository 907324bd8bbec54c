"""QLinearSoftmax (com.microsoft, as onnxruntime): Softmax on quantized X, along `axis` (opset
>= 13, the `opset` attribute) or over the flattened dims from `axis` on (opset < 13).

X and Y share one type, int8 or uint8; scales per tensor.  As onnxruntime: a 256-entry
table of exp((i - 255 + shift) * x_scale) (double, stored as float), each row's values
taken relative to its max, summed in float (in the order of onnxruntime's x86 kernel),
y = saturate(round(e * (1 / sum * floor(1 / y_scale)) + y_zero_point)), half to even.
x_zero_point cancels out.  (onnxruntime's portable kernel wraps int8 results above 127;
its x86 kernels, the oracle here, saturate.)"""

import math

import numpy as np

from ._base import REQUIRED, Info, Launch, Op, normalize_axis
from ._quant import check_unary_quantized


class QLinearSoftmax(Op):
    domain = "com.microsoft"
    attributes = {"axis": -1, "opset": REQUIRED}  # the schema's axis default: -1 at every opset
    params = "mlrt_qlinear_softmax_params"
    tolerance = (0, 1)  # (rtol, atol in units of the quantized type): exp tables may round apart

    def _rows(self, inputs):
        ins = check_unary_quantized(self, inputs)
        x, x_s, x_z, y_s, y_z = ins
        if x.rank == 0:
            raise self.fail("X must have rank >= 1")
        opset = int(self.a.opset)
        axis = normalize_axis(int(self.a.axis), x.rank, self.where)
        shape = [int(d) for d in x.shape]
        outer = math.prod(shape[:axis])
        if opset < 13:
            return x, dict(outer=outer, D=math.prod(shape[axis:]), inner=1)
        return x, dict(outer=outer, D=shape[axis], inner=math.prod(shape[axis + 1:]))

    def infer(self, inputs):
        x, _ = self._rows(inputs)
        return [Info(np.dtype(x.dtype), tuple(x.shape))]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, self._rows(inputs)[1])
