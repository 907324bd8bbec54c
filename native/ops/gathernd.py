"""GatherND: slices of data addressed by index tuples (the indices' last axis), after batch_dims."""

from ._base import Info, Op
from ._shape import index_dtype


class GatherND(Op):
    params = "mlrt_gather_nd_params"
    moves = (0,)

    def batch_dims(self) -> int:
        return int(getattr(self.a, "batch_dims", 0))

    def infer(self, inputs):
        x = self.need(inputs, 0)
        ind = self.need(inputs, 1)
        index_dtype(self, ind)
        b = self.batch_dims()
        if ind.rank < 1 or x.rank < 1 or not 0 <= b < min(ind.rank, x.rank):
            raise self.fail(f"batch_dims {b} does not fit data rank {x.rank} and indices rank {ind.rank}")
        k = ind.shape[-1]
        if not 1 <= k <= x.rank - b or x.shape[:b] != ind.shape[:b]:
            raise self.fail(f"indices of shape {ind.shape} do not address data of shape {x.shape} "
                            f"(batch_dims {b})")
        return [Info(x.dtype, tuple(ind.shape[:-1]) + x.shape[b + k:])]

    def pack(self, inputs, outputs):
        return {"batch_dims": self.batch_dims()}


class GatherND_12(GatherND):
    attributes = {"batch_dims": 0}
