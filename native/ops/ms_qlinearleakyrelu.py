"""QLinearLeakyRelu (com.microsoft, as onnxruntime): Y = quantize(LeakyRelu(dequantize(X), alpha)),
alpha defaulting to 0.01.

Types and per-tensor scales as QLinearSigmoid; a 256-entry table built from the scales
(float math, rounding half to even), exact against onnxruntime but where a float
product rounds differently (one unit at most)."""

from .ms_qlinearsigmoid import _QLinearLookup


class QLinearLeakyRelu(_QLinearLookup):
    attributes = {"alpha": 0.01}
    params = "mlrt_qlinear_lut_params"

    def pack(self, inputs, outputs):
        return {"alpha": float(self.a.alpha)}
