"""SkipSimplifiedLayerNormalization (com.microsoft, as onnxruntime): RMS normalization over
the last dim of input + skip + bias (bias optional), scaled by gamma; outputs output,
mean, inv_std_var and input_skip_bias_sum."""

from ._microsoft import _SkipNormalization


class SkipSimplifiedLayerNormalization(_SkipNormalization):
    domain = "com.microsoft"
    vectors = ((3, "bias"),)
