"""Shared semantics of com.microsoft contrib operators (as onnxruntime's), whose
operator files are `ms_<op>.py`: the activations of X plus a bias over the last dim
(and a skip of X's shape), and the layer norms of input + skip + bias."""

import numpy as np

from .._lib import enum_value
from ._base import Info, Op
from ._reduce import NORM_FLOATS

_STATS = np.dtype(np.float32)  # onnxruntime's mean / inv_std_var type


def _check_vector(op, inputs, index, name, x):
    """Input `index`, when present, must be 1-D of X's last dim and type."""
    if index < len(inputs) and inputs[index] is not None:
        v = inputs[index]
        if np.dtype(v.dtype) != np.dtype(x.dtype) or tuple(v.shape) != (x.shape[-1] if x.rank else 1,):
            raise op.fail(f"{name} of shape {tuple(v.shape)} ({np.dtype(v.dtype).name}) must be 1-D of X's last "
                          f"dim ({x.shape[-1] if x.rank else 1}, {np.dtype(x.dtype).name})")


class _BiasActivation(Op):
    """y = act(X [+ bias] [+ skip]): inputs X, bias (1-D, X's last dim), skip (X's shape).
    `mode` names the enum mlrt_bias_activation constant of kernels/activation.h."""

    params = "mlrt_activation_params"
    mode = "MLRT_BIAS_ACT_IDENTITY"
    needs_bias = False
    tolerance = (1e-5, 1e-6)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if self.needs_bias:
            self.need(inputs, 1)
        _check_vector(self, inputs, 1, "bias", x)
        if len(inputs) > 2 and inputs[2] is not None:
            s = inputs[2]
            if np.dtype(s.dtype) != np.dtype(x.dtype) or tuple(s.shape) != tuple(x.shape):
                raise self.fail(f"skip of shape {tuple(s.shape)} must have X's shape {tuple(x.shape)} and type")
        return [Info(x.dtype, tuple(x.shape))]

    def pack(self, inputs, outputs):
        return {"mode": enum_value(self.mode), "alpha": float(getattr(self.a, "alpha", 0.0))}


class _SkipNormalization(Op):
    """output = norm(input + skip + bias) * gamma [+ beta] over the last dim; outputs
    output, mean, inv_std_var (float32, input's shape with the last dim 1) and
    input_skip_bias_sum.  skip has input's shape or its last dims (repeated)."""

    attributes = {"epsilon": 1e-12}
    params = "mlrt_normalize_params"
    tolerance = (1e-4, 1e-5)
    vectors = ()  # (input index, name) of the 1-D inputs after gamma

    def infer(self, inputs):
        x, skip = self.need(inputs, 0), self.need(inputs, 1)
        self.need(inputs, 2)
        if np.dtype(x.dtype) not in NORM_FLOATS:
            raise self.fail(f"needs float input, not {np.dtype(x.dtype).name}")
        if x.rank < 1:
            raise self.fail("input needs at least one dim")
        for index, name in ((2, "gamma"), *self.vectors):
            _check_vector(self, inputs, index, name, x)
        if (np.dtype(skip.dtype) != np.dtype(x.dtype) or skip.rank > x.rank or skip.rank < 1
                or tuple(skip.shape) != tuple(x.shape[x.rank - skip.rank:])
                or (skip.size == 0 and x.size != 0)):
            raise self.fail(f"skip of shape {tuple(skip.shape)} does not match input's {tuple(x.shape)}")
        stats = Info(_STATS, tuple(x.shape[:-1]) + (1,))
        outs = [Info(x.dtype, tuple(x.shape)), stats, stats, Info(x.dtype, tuple(x.shape))]
        return outs[:len(self.node.output)]

    def pack(self, inputs, outputs):
        return {"n_kept": 0, "epsilon": float(self.a.epsilon)}
