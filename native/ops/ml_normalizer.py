"""Normalizer (ai.onnx.ml): each row of X ([N, C] or [C]) divided by its norm, as float32.

norm MAX divides by the row's largest value (NaN skipped; as onnxruntime does and
the spec says, not by the largest magnitude as onnx.reference does), L1 by the sum
of magnitudes, L2 by the Euclidean length; a row whose norm is 0 is left as it is."""

import numpy as np

from .._lib import enum_value
from ._base import Info
from ._ml import _MlOp

# norm -> the constants of kernels/ml_misc.h (the numbers live there)
_NORMS = {"MAX": "MLRT_ML_NORM_MAX", "L1": "MLRT_ML_NORM_L1", "L2": "MLRT_ML_NORM_L2"}


class Normalizer(_MlOp):
    attributes = {"norm": "MAX"}
    params = "mlrt_ml_normalizer_params"

    def infer(self, inputs):
        x = self.features(inputs)
        if x.rank not in (1, 2):
            raise self.fail(f"X must be [N, C] or [C], got shape {list(x.shape)}")
        if self.a.norm not in _NORMS:
            raise self.fail(f"norm must be MAX, L1 or L2, got {self.a.norm!r}")
        return [Info(np.dtype(np.float32), x.shape)]

    def pack(self, inputs, outputs):
        return {"norm": enum_value(_NORMS[self.a.norm])}
