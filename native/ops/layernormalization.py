"""LayerNormalization: y = (x - mean) / sqrt(var + epsilon) * Scale + B, the statistics
taken over the dims from axis on; optionally also outputs Mean and InvStdDev (of the
stash type, float32 for stash_type 1, shaped like x with those dims set to 1)."""

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view, normalize_axis
from ._reduce import NORM_FLOATS, grouped_view

_STASH = {1: np.dtype(np.float32), 11: np.dtype(np.float64)}


class LayerNormalization(Op):
    attributes = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}
    params = "mlrt_normalize_params"
    tolerance = (1e-4, 1e-5)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        self.need(inputs, 1)  # scale
        if np.dtype(x.dtype) not in NORM_FLOATS:
            raise self.fail(f"needs float or double input, not {np.dtype(x.dtype).name}")
        if self.a.stash_type not in _STASH:
            raise self.fail(f"stash_type {self.a.stash_type} is not supported")
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        for i in (1, 2):
            if i < len(inputs) and inputs[i] is not None:
                if inputs[i].dtype != x.dtype or broadcast_shape(inputs[i].shape, x.shape, where=self.where) != x.shape:
                    raise self.fail(f"input {i} of shape {inputs[i].shape} does not broadcast to X's {x.shape}")
        stats = Info(_STASH[self.a.stash_type], x.shape[:axis] + (1,) * (x.rank - axis))
        return [Info(x.dtype, x.shape), stats, stats][:len(self.node.output)]

    def launch(self, inputs, outputs):
        x = inputs[0]
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        present = [i for i in (1, 2) if i < len(inputs) and inputs[i] is not None]
        others = [(inputs[i].shape, broadcast_view(inputs[i].shape, x.shape).strides) for i in present]
        n_kept, view, views = grouped_view(x.shape, set(range(axis, x.rank)), *others)
        return Launch(self.op_type, {"n_kept": n_kept, "epsilon": float(self.a.epsilon)},
                      {0: view, **dict(zip(present, views))})
