"""ReverseSequence: reverse the first sequence_lens[b] steps of each batch entry."""

import numpy as np

from ._base import Info, Op, normalize_axis


class ReverseSequence(Op):
    attributes = {"batch_axis": 1, "time_axis": 0}
    params = "mlrt_reverse_sequence_params"
    moves = (0,)

    def axes(self, x):
        batch = normalize_axis(int(self.a.batch_axis), x.rank, self.where)
        time = normalize_axis(int(self.a.time_axis), x.rank, self.where)
        if {batch, time} != {0, 1}:
            raise self.fail(f"batch_axis and time_axis must be 0 and 1, not {batch} and {time}")
        return batch, time

    def infer(self, inputs):
        x = self.need(inputs, 0)
        lens = self.need(inputs, 1)
        if x.rank < 2:
            raise self.fail(f"input must have rank >= 2, not {x.rank}")
        batch, _ = self.axes(x)
        if lens.shape != (x.shape[batch],) or np.dtype(lens.dtype) not in (np.dtype(np.int64), np.dtype(np.int32)):
            raise self.fail(f"sequence_lens must be int64 of shape ({x.shape[batch]},), not {lens.shape}")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        batch, time = self.axes(inputs[0])
        return {"batch_axis": batch, "time_axis": time}
