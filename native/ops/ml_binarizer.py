"""Binarizer (ai.onnx.ml): y = 1 where x > threshold, else 0 (NaN gives 0), in X's type."""

from ._base import Info
from ._ml import _MlOp


class Binarizer(_MlOp):
    attributes = {"threshold": 0.0}
    params = "mlrt_ml_binarizer_params"
    tolerance = (0.0, 0.0)

    def infer(self, inputs):
        x = self.features(inputs)
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        return {"threshold": float(self.a.threshold)}
