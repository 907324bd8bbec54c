"""FastGelu (com.microsoft, as onnxruntime): the tanh Gelu of X + bias (bias optional,
1-D over the last dim): v/2 * (1 + tanh(sqrt(2/pi) * (v + 0.044715 v^3)))."""

from ._microsoft import _BiasActivation


class FastGelu(_BiasActivation):
    domain = "com.microsoft"
    mode = "MLRT_BIAS_ACT_GELU_TANH"
