"""QuickGelu (com.microsoft, as onnxruntime): y = x * sigmoid(alpha * x)."""

from ._microsoft import _BiasActivation


class QuickGelu(_BiasActivation):
    domain = "com.microsoft"
    attributes = {"alpha": 1.702}
    mode = "MLRT_BIAS_ACT_QUICK_GELU"
