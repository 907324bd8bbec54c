"""FusedGemm (com.microsoft, as onnxruntime): activation(Gemm(A, B, C)), float32.
`activation` is one of FusedConv's (Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, Clip);
activation_alpha / activation_beta (leaky_relu_alpha, older) set its parameters."""

import numpy as np

from ... import _errors
from .._lib import enum_value
from .fusedconv import FusedConv
from .gemm import Gemm


class FusedGemm(Gemm):
    domain = "com.microsoft"
    attributes = {**Gemm.attributes, "activation": "", "activation_alpha": None, "activation_beta": None,
                  "activation_gamma": None, "leaky_relu_alpha": None}
    params = "mlrt_fused_gemm_params"
    ACTIVATIONS = {k: v for k, v in FusedConv.ACTIVATIONS.items() if k not in ("HardSwish", "Swish")}

    def __init__(self, node, opset):
        super().__init__(node, opset)
        self.a.broadcast = 1  # C broadcasts, as Gemm's does from opset 7 (this domain is at opset 1)

    def infer(self, inputs):
        if np.dtype(self.need(inputs, 0).dtype) != np.dtype(np.float32):
            raise _errors.NotImplemented(f"{self.where}: FusedGemm runs on float32 only, "
                                         f"not {np.dtype(inputs[0].dtype).name}")
        return super().infer(inputs)

    def launch(self, inputs, outputs):
        launch = super().launch(inputs, outputs)
        name = self.a.activation.decode() if isinstance(self.a.activation, bytes) else str(self.a.activation or "")
        if name not in self.ACTIVATIONS:
            raise self.fail(f"activation '{name}' is not one of {', '.join(a for a in self.ACTIVATIONS if a)}")
        constant, defaults = self.ACTIVATIONS[name]
        given = (self.a.activation_alpha if self.a.activation_alpha is not None else self.a.leaky_relu_alpha,
                 self.a.activation_beta)
        values = [float(g) if g is not None else d for g, d in zip(given, list(defaults) + [0.0, 0.0])]
        launch.kernel = "FusedGemm"
        launch.params = {**launch.params, "b_transposed": launch.params.get("b_transposed", 0),
                         "activation": enum_value(constant), "act_alpha": values[0], "act_beta": values[1]}
        return launch
