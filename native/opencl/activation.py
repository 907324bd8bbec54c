"""Activations on OpenCL (activation.cl): one elementwise kernel each."""

import numpy as np

from ._runtime import launcher

_KERNELS = {"Relu": "mlrt_relu", "LeakyRelu": "mlrt_leaky_relu", "Sigmoid": "mlrt_sigmoid", "Tanh": "mlrt_tanh"}


@launcher(*_KERNELS, family="activation")
def activation(k, op, inputs, outputs):
    n = outputs[0].size
    extra = (np.float32(op.a.alpha),) if op.op_type == "LeakyRelu" else ()
    k.enqueue(k.kernel(_KERNELS[op.op_type]), (n,), None, k.input(0), k.output(0), np.int64(n), *extra)
