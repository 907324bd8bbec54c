"""Gather: pick entries along one axis by index (negative indices count from the end)."""

from ._base import Info, Op, normalize_axis
from ._shape import index_dtype


class Gather(Op):
    attributes = {"axis": 0}
    params = "mlrt_gather_params"
    moves = (0,)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        ind = self.need(inputs, 1)
        index_dtype(self, ind)
        axis = normalize_axis(int(self.a.axis), x.rank, self.where)
        return [Info(x.dtype, x.shape[:axis] + tuple(ind.shape) + x.shape[axis + 1:])]

    def pack(self, inputs, outputs):
        return {"axis": normalize_axis(int(self.a.axis), inputs[0].rank, self.where)}
