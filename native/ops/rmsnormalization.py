"""RMSNormalization: y = x / sqrt(mean(x^2) + epsilon) * Scale, the mean taken over
the dims from axis on; Scale broadcasts to X and may have another float type.  Y has
X's element type, as ONNX's type inference and onnx.reference give it (the schema
names Scale's type constraint for Y)."""

import numpy as np

from .._lib import onnx_type
from ._base import Info, Launch, Op, broadcast_shape, broadcast_view, normalize_axis
from ._reduce import grouped_view

_FLOATS = (1, 10, 11, 16)


class RMSNormalization(Op):
    attributes = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}
    params = "mlrt_rmsnorm_params"
    tolerance = (1e-4, 1e-5)

    def infer(self, inputs):
        x, scale = self.need(inputs, 0), self.need(inputs, 1)
        for t, name in ((x, "X"), (scale, "Scale")):
            if onnx_type(t.dtype) not in _FLOATS:
                raise self.fail(f"{name} must be float, double, float16 or bfloat16, not {np.dtype(t.dtype).name}")
        if self.a.stash_type not in (1, 11):
            raise self.fail(f"stash_type {self.a.stash_type} is not supported")
        normalize_axis(self.a.axis, x.rank, self.where)
        if scale.rank > x.rank or broadcast_shape(scale.shape, x.shape, where=self.where) != tuple(x.shape):
            raise self.fail(f"Scale of shape {scale.shape} does not broadcast to X's {x.shape}")
        return [Info(x.dtype, tuple(x.shape))]

    def launch(self, inputs, outputs):
        x, scale = inputs[0], inputs[1]
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        other = (scale.shape, broadcast_view(scale.shape, x.shape).strides)
        n_kept, view, (sview,) = grouped_view(x.shape, set(range(axis, x.rank)), other)
        return Launch(self.op_type, {"n_kept": n_kept, "epsilon": float(self.a.epsilon)}, {0: view, 1: sview})
