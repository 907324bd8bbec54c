"""Range (com.microsoft, as onnxruntime's contrib op): ai.onnx Range's semantics with
delta optional (1 when absent) and float, double, int16, int32 or int64 only.

An absent delta is not supplied as an extra input: the node may name it "" (an absent
input at index 2, which `Launch.extra` would land after), so the kernel (fill.c's
k_range) reads delta as 1 when input 2 is absent or missing."""

import numpy as np

from ._base import Info
from . import range as _range

_TYPES = {np.dtype(t) for t in (np.float32, np.float64, np.int16, np.int32, np.int64)}


class Range(_range.Range):
    domain = "com.microsoft"

    def infer(self, inputs):
        start = self.need(inputs, 0)
        dtype = np.dtype(start.dtype)
        if dtype not in _TYPES:
            raise self.fail(f"start, limit and delta must be float, double, int16, int32 or int64, "
                            f"not {dtype.name}")
        if len(inputs) > 2 and inputs[2] is not None:
            return super().infer(inputs)
        one = Info(dtype, (), np.ones((), dtype))
        return super().infer(list(inputs[:2]) + [one])

    def pack(self, inputs, outputs):
        return {"low_in_float": 0}
