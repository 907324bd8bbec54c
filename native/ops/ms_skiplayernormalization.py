"""SkipLayerNormalization (com.microsoft, as onnxruntime): LayerNormalization over the
last dim of input + skip + bias, scaled by gamma and shifted by beta (beta and bias
optional); outputs output, mean, inv_std_var and input_skip_bias_sum."""

from ._microsoft import _SkipNormalization


class SkipLayerNormalization(_SkipNormalization):
    domain = "com.microsoft"
    vectors = ((3, "beta"), (4, "bias"))
