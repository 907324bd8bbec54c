"""Range: start, start + delta, ... up to limit (exclusive); numpy arange's arithmetic.

From opset 27, float16 and bfloat16 ranges step in float32 (stash_type 1, the
default) or in double (stash_type 11)."""

import math

import numpy as np
from onnx import TensorProto, helper

from ._base import Info, Op

_LOW = {np.dtype(np.float16), np.dtype(helper.tensor_dtype_to_np_dtype(TensorProto.BFLOAT16))}
_TYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int16, np.int32, np.int64)} | _LOW


class Range(Op):
    params = "mlrt_range_params"
    value_inputs = (0, 1, 2)

    def infer(self, inputs):
        vals = [self.value_of(inputs, i) for i in range(3)]
        if any(v is None for v in vals):
            raise self.fail("start, limit and delta are required")
        vals = [np.asarray(v) for v in vals]
        dtype = np.dtype(vals[0].dtype)
        if dtype not in _TYPES or any(np.dtype(v.dtype) != dtype for v in vals) or any(v.size != 1 for v in vals):
            raise self.fail("start, limit and delta must be scalars of one type "
                            "(float, double, float16, bfloat16, int16, int32 or int64)")
        start, limit, delta = (float(v.reshape(-1)[0]) if dtype.kind not in "iu" else int(v.reshape(-1)[0])
                               for v in vals)
        if delta == 0:
            raise self.fail("delta is 0")
        if dtype.kind == "i":
            n = max(0, -((limit - start) // -delta))
        else:
            n = max(0, math.ceil((limit - start) / delta)) if math.isfinite((limit - start) / delta) else -1
            if n < 0:
                raise self.fail(f"range({start}, {limit}, {delta}) is not finite")
        return [Info(dtype, (int(n),))]

    def pack(self, inputs, outputs):
        float_steps = self.opset >= 27 and getattr(self.a, "stash_type", 1) == 1
        return {"low_in_float": 1 if float_steps else 0}


class Range_27(Range):
    attributes = {"stash_type": 1}
