"""BiasAdd (com.microsoft, as onnxruntime): Y = X + bias + skip, bias 1-D over the
last dim, skip of X's shape."""

from ._microsoft import _BiasActivation


class BiasAdd(_BiasActivation):
    domain = "com.microsoft"
    needs_bias = True

    def infer(self, inputs):
        self.need(inputs, 2)
        return super().infer(inputs)
