"""FusedConv (com.microsoft, as in onnxruntime): activation(Conv(X, W, B) + Z).

What a fusion pass turns Conv (+ Add of a same-shape Z) + activation into, so the
result is finished while it is still in cache.  Z (input 3) is optional.  Beside
onnxruntime's activations, mlrt's FusedConv takes "HardSwish" (v * HardSigmoid(v; alpha,
beta), defaults 1/6 and 0.5) and "Swish" (v * Sigmoid(alpha * v), SiLU at alpha 1), which
the fusion pass makes of HardSwish, HardSigmoid * x and Sigmoid * x; onnxruntime does
not know these two names."""

import numpy as np

from .._lib import enum_value
from .conv import Conv


class FusedConv(Conv):
    domain = "com.microsoft"
    attributes = {**Conv.attributes, "activation": "", "activation_params": None}
    # activation name -> (enum mlrt_conv_activation constant in kernels/conv.h, default parameters)
    ACTIVATIONS = {"": ("MLRT_CONV_ACT_NONE", ()), "Identity": ("MLRT_CONV_ACT_NONE", ()),
                   "Relu": ("MLRT_CONV_ACT_RELU", ()), "LeakyRelu": ("MLRT_CONV_ACT_LEAKY_RELU", (0.01,)),
                   "Clip": ("MLRT_CONV_ACT_CLIP", (float("-inf"), float("inf"))),
                   "Sigmoid": ("MLRT_CONV_ACT_SIGMOID", ()), "Tanh": ("MLRT_CONV_ACT_TANH", ()),
                   "HardSigmoid": ("MLRT_CONV_ACT_HARD_SIGMOID", (0.2, 0.5)),
                   "HardSwish": ("MLRT_CONV_ACT_HARD_SWISH", (1 / 6, 0.5)), "Swish": ("MLRT_CONV_ACT_SWISH", (1.0,))}

    def geometry(self, inputs):
        shape, params = super().geometry(inputs)
        z = inputs[3] if len(inputs) > 3 else None
        if z is not None and (tuple(z.shape) != tuple(shape) or np.dtype(z.dtype) != np.dtype(inputs[0].dtype)):
            raise self.fail(f"Z has shape {z.shape} ({np.dtype(z.dtype).name}), expected {tuple(shape)} "
                            f"({np.dtype(inputs[0].dtype).name})")
        return shape, {**params, **activation_params(self, self.ACTIVATIONS)}


def activation_params(op, table: dict) -> dict:
    """The activation, alpha and beta of mlrt_conv_params for `op`'s activation and
    activation_params attributes, from `table` (name -> (enum constant, defaults))."""
    name = op.a.activation or ""
    if name not in table:
        raise op.fail(f"activation '{name}' is not one of {', '.join(a for a in table if a)}")
    constant, defaults = table[name]
    values = [float(v) for v in (op.a.activation_params or defaults)]
    if len(values) < len(defaults):
        raise op.fail(f"activation {name} needs {len(defaults)} activation_params, got {len(values)}")
    values += [0.0] * (2 - len(values))
    return {"activation": enum_value(constant), "alpha": values[0], "beta": values[1]}
