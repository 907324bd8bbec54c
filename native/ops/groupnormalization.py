"""GroupNormalization: the C channels of x (N, C, D1, ...) split into num_groups groups;
y = (x - mean) / sqrt(var + epsilon) * scale + bias with the statistics of each instance's
group.  Opset 18 takes scale and bias per group, opset 21 per channel."""

import numpy as np

from ._base import REQUIRED, Info, Launch, Op
from ._reduce import NORM_FLOATS, grouped_view


class GroupNormalization_18(Op):
    attributes = {"epsilon": 1e-5, "num_groups": REQUIRED}
    params = "mlrt_normalize_params"
    tolerance = (1e-4, 1e-5)
    per_channel = False  # scale/bias of shape (C,) rather than (num_groups,)

    def infer(self, inputs):
        x, scale, bias = (self.need(inputs, i) for i in range(3))
        if np.dtype(x.dtype) not in NORM_FLOATS:
            raise self.fail(f"needs float or double input, not {np.dtype(x.dtype).name}")
        g = self.a.num_groups
        if x.rank < 2 or g <= 0 or x.shape[1] % g:
            raise self.fail(f"{g} groups do not divide the channels of {x.shape}")
        n = x.shape[1] if self.per_channel else g
        for t in (scale, bias):
            if t.shape != (n,) or t.dtype != x.dtype:
                raise self.fail(f"scale and bias must be ({n},) of X's type, not {t.shape}")
        return [Info(x.dtype, x.shape)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        g = self.a.num_groups
        cpg = x.shape[1] // g
        shape = (x.shape[0], g, cpg) + tuple(x.shape[2:])  # channels split into (group, channel in group)
        strides = (0, cpg, 1) if self.per_channel else (0, 1, 0)
        strides += (0,) * (len(shape) - 3)
        n_kept, view, (s, b) = grouped_view(shape, set(range(2, len(shape))), (None, strides), (None, strides))
        return Launch(self.op_type, {"n_kept": n_kept, "epsilon": float(self.a.epsilon)}, {0: view, 1: s, 2: b})


class GroupNormalization_21(GroupNormalization_18):
    attributes = {"epsilon": 1e-5, "num_groups": REQUIRED, "stash_type": 1}
    per_channel = True
