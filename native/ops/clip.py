"""Clip: y = min(max(x, min), max); an absent bound does not clip.

Before opset 11 the bounds are float attributes (opset 6 gives them defaults of
-+FLT_MAX); from opset 11 they are optional scalar inputs of x's type."""

import numpy as np

from ._base import Info
from ._elementwise import _Unary

_FLT_MAX = float(np.finfo(np.float32).max)


class Clip_1(_Unary):
    attributes = {"min": None, "max": None}
    params = "mlrt_clip_params"

    def pack(self, inputs, outputs):
        lo, hi = self.a.min, self.a.max
        return {"min": 0.0 if lo is None else float(lo), "max": 0.0 if hi is None else float(hi),
                "has_min": int(lo is not None), "has_max": int(hi is not None)}


class Clip_6(Clip_1):
    attributes = {"min": -_FLT_MAX, "max": _FLT_MAX}


class Clip_11(_Unary):
    params = "mlrt_clip_params"

    def infer(self, inputs):
        x = self.need(inputs, 0)
        for k, name in ((1, "min"), (2, "max")):
            b = inputs[k] if k < len(inputs) else None
            if b is None:
                continue
            if np.dtype(b.dtype) != np.dtype(x.dtype):
                raise self.fail(f"{name} is {np.dtype(b.dtype).name}, input is {np.dtype(x.dtype).name}")
            if b.size != 1:
                raise self.fail(f"{name} must be a scalar, it has shape {tuple(b.shape)}")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        return {"has_min": 0, "has_max": 0}

