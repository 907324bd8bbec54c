"""Scaler (ai.onnx.ml): y = (x - offset) * scale as float32, offset and scale holding one
value or one per feature (the last axis).  Absent, they are 0 and 1.  (onnx.reference
keeps a double input double; the spec and onnxruntime give float32.)"""

import numpy as np

from ._base import Info
from ._ml import _MlTableOp


class Scaler(_MlTableOp):
    attributes = {"offset": None, "scale": None}
    ranks = None

    def make_tables(self):
        offset = np.asarray(self.a.offset if self.a.offset else [0.0], dtype=np.float64)
        scale = np.asarray(self.a.scale if self.a.scale else [1.0], dtype=np.float64)
        return [offset, scale]

    def outputs_for(self, x):
        c = x.shape[-1] if x.rank else 1
        for name, t in zip(("offset", "scale"), self.tables):
            if t.size not in (1, c):
                raise self.fail(f"{name} has {t.size} values; X has {c} features (give 1 or {c})")
        return [Info(np.dtype(np.float32), x.shape)]
