"""MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9), the statistics taken
over `axes` (default [0, 2, 3])."""

import numpy as np

from ._base import Info, Launch, Op, normalize_axis
from ._reduce import FLOATS, grouped_view


class MeanVarianceNormalization(Op):
    attributes = {"axes": [0, 2, 3]}
    params = "mlrt_normalize_params"
    tolerance = (1e-4, 1e-5)

    def _axes(self, rank):
        axes = {normalize_axis(int(a), rank, self.where) for a in self.a.axes}
        if len(axes) != len(self.a.axes):
            raise self.fail(f"axes {list(self.a.axes)} repeat an axis")
        return axes

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if np.dtype(x.dtype) not in FLOATS:
            raise self.fail(f"needs float or double input, not {np.dtype(x.dtype).name}")
        self._axes(x.rank)
        return [Info(x.dtype, x.shape)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        n_kept, view, _ = grouped_view(x.shape, self._axes(x.rank))
        return Launch(self.op_type, {"n_kept": n_kept, "epsilon": 1e-9}, {0: view})
