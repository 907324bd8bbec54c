"""InstanceNormalization: y = scale * (x - mean) / sqrt(var + epsilon) + B, the statistics
taken per instance and channel over the spatial dims of x (N, C, D1, ...)."""

import numpy as np

from ._base import Info, Launch, Op
from ._reduce import NORM_FLOATS, grouped_view


class InstanceNormalization(Op):
    attributes = {"epsilon": 1e-5}
    params = "mlrt_normalize_params"
    tolerance = (1e-4, 1e-5)

    def infer(self, inputs):
        x, scale, bias = (self.need(inputs, i) for i in range(3))
        if np.dtype(x.dtype) not in NORM_FLOATS:
            raise self.fail(f"needs float or double input, not {np.dtype(x.dtype).name}")
        if x.rank < 2:
            raise self.fail(f"input must be (N, C, ...), not {x.shape}")
        for t in (scale, bias):
            if t.shape != (x.shape[1],) or t.dtype != x.dtype:
                raise self.fail(f"scale and B must be ({x.shape[1]},) of X's type, not {t.shape}")
        return [Info(x.dtype, x.shape)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        per_channel = (0, 1) + (0,) * (x.rank - 2)
        n_kept, view, (s, b) = grouped_view(x.shape, set(range(2, x.rank)), (None, per_channel), (None, per_channel))
        return Launch(self.op_type, {"n_kept": n_kept, "epsilon": float(self.a.epsilon)}, {0: view, 1: s, 2: b})
