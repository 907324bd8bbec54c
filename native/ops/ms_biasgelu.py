"""BiasGelu (com.microsoft, as onnxruntime): the erf Gelu of A + B, B 1-D over the last dim."""

from ._microsoft import _BiasActivation


class BiasGelu(_BiasActivation):
    domain = "com.microsoft"
    mode = "MLRT_BIAS_ACT_GELU"
    needs_bias = True
