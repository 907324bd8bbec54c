"""GatherElements: y[i] = data[i with i[axis] replaced by indices[i]]; y has the indices' shape."""

from ._base import Info, Op, normalize_axis
from ._shape import index_dtype


class GatherElements(Op):
    attributes = {"axis": 0}
    params = "mlrt_gather_elements_params"
    moves = (0,)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        ind = self.need(inputs, 1)
        index_dtype(self, ind)
        axis = normalize_axis(int(self.a.axis), x.rank, self.where)
        if ind.rank != x.rank or any(i > n for d, (i, n) in enumerate(zip(ind.shape, x.shape)) if d != axis):
            raise self.fail(f"indices of shape {ind.shape} do not fit data of shape {x.shape}")
        return [Info(x.dtype, tuple(ind.shape))]

    def pack(self, inputs, outputs):
        return {"axis": normalize_axis(int(self.a.axis), inputs[0].rank, self.where)}
