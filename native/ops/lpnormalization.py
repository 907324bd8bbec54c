"""LpNormalization: y = x / ||x||_p along axis (p = 1: sum of |x|, p = 2: Euclidean);
0 where the norm is 0."""

import numpy as np

from ._base import Info, Launch, Op, normalize_axis
from ._reduce import FLOATS, grouped_view


class LpNormalization(Op):
    attributes = {"axis": -1, "p": 2}
    params = "mlrt_normalize_params"

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if np.dtype(x.dtype) not in FLOATS:
            raise self.fail(f"needs float or double input, not {np.dtype(x.dtype).name}")
        if self.a.p not in (1, 2):
            raise self.fail(f"p must be 1 or 2, not {self.a.p}")
        normalize_axis(self.a.axis, x.rank, self.where)
        return [Info(x.dtype, x.shape)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        n_kept, view, _ = grouped_view(x.shape, {axis})
        return Launch(self.op_type, {"n_kept": n_kept, "epsilon": 0.0, "p": int(self.a.p)}, {0: view})
