"""Activations and one-tensor math on OpenCL (activation.cl): one elementwise kernel
each, handed the op's alpha/beta/gamma from its own `pack()`; Gelu's mode picks the
erf or tanh kernel; Clip takes its bounds from attributes (opset < 11) or inputs."""

import numpy as np

from ._recorders import recorder
from .elementwise import VEC, enqueue_vec

BUILD_OPTIONS = {"VEC": VEC}  # activation.cl's defines (see _programs.family_options)

_KERNELS = {"Relu": "relu", "LeakyRelu": "leaky_relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Elu": "elu",
            "Selu": "selu", "Celu": "celu", "HardSigmoid": "hard_sigmoid", "HardSwish": "hard_swish",
            "ThresholdedRelu": "thresholded_relu", "Mish": "mish", "Softplus": "softplus",
            "Softsign": "softsign", "Erf": "erf", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs",
            "Neg": "neg", "Reciprocal": "reciprocal", "Floor": "floor", "Ceil": "ceil", "Round": "round",
            "Sign": "sign", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "asin", "Acos": "acos",
            "Atan": "atan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh"}
_GELU = {"none": "gelu", "tanh": "gelu_tanh"}  # by approximate (Gelu.pack has checked it)


@recorder(*_KERNELS, "Gelu", family="activation")
def activation(k, op, inputs, outputs):
    n = outputs[0].size
    p = op.pack(inputs, outputs) or {}
    name = _GELU[op.a.approximate] if op.op_type == "Gelu" else _KERNELS[op.op_type]
    coefficients = (np.float32(p.get(c, 0.0)) for c in ("alpha", "beta", "gamma"))
    enqueue_vec(k, k.kernel(f"mlrt_{name}"), n, k.input(0), k.output(0), np.int64(n), *coefficients)


@recorder("Clip", family="activation")
def clip(k, op, inputs, outputs):
    n = outputs[0].size
    p = op.pack(inputs, outputs)
    if p["has_min"] or p["has_max"]:  # attribute bounds, rounded to x's type as clip.c does
        with np.errstate(over="ignore"):  # +-FLT_MAX (opset 6 defaults) is +-inf in float16
            lo, hi = (np.float32(np.array(p[b], inputs[0].dtype)) for b in ("min", "max"))
        enqueue_vec(k, k.kernel("mlrt_clip"), n, k.input(0), k.output(0), np.int64(n),
                   np.int32(p["has_min"]), lo, np.int32(p["has_max"]), hi)
        return
    bounds = []
    for b in (1, 2):
        given = b < len(inputs) and inputs[b] is not None
        bounds += [np.int32(given), k.input(b) if given else k.input(0)]  # an absent bound is not read
    enqueue_vec(k, k.kernel("mlrt_clip_inputs"), n, k.input(0), k.output(0), np.int64(n), *bounds)
