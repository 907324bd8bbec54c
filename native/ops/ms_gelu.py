"""Gelu (com.microsoft, as onnxruntime): y = x/2 * (1 + erf(x / sqrt 2))."""

from ._microsoft import _BiasActivation


class Gelu(_BiasActivation):
    domain = "com.microsoft"
    mode = "MLRT_BIAS_ACT_GELU"
