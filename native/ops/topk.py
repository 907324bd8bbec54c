"""TopK: the k largest (or smallest) elements along axis, best first, with their int64
indices; ties go to the lower index and a NaN ranks above every number.  k is an
attribute in opset 1 and input 1 from opset 10; largest/sorted arrive in 11 (the
output is always sorted, which sorted=0 allows)."""

import numpy as np

from ._base import REQUIRED, Info, Op, normalize_axis
from ._reduce import split_axis


class TopK_1(Op):
    attributes = {"k": REQUIRED, "axis": -1}
    params = "mlrt_topk_params"

    def _k(self, inputs) -> int:
        return int(self.a.k)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank == 0:
            raise self.fail("input must have at least one dimension")
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        k = self._k(inputs)
        if not 0 <= k <= x.shape[axis]:
            raise self.fail(f"k = {k} is not within the {x.shape[axis]} elements of axis {axis}")
        shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
        return [Info(x.dtype, shape), Info(np.dtype(np.int64), shape)]

    def pack(self, inputs, outputs):
        x = inputs[0]
        axis = normalize_axis(self.a.axis, x.rank, self.where)
        return {**split_axis(x.shape, axis), "k": self._k(inputs), "largest": int(getattr(self.a, "largest", 1))}


class TopK_10(TopK_1):
    attributes = {"axis": -1}
    value_inputs = (1,)

    def _k(self, inputs) -> int:
        k = np.asarray(self.value_of(inputs, 1))
        if k.size != 1 or k.dtype.kind not in "iu":
            raise self.fail(f"K must hold one integer, not {k!r}")
        return int(k.reshape(-1)[0])


class TopK_11(TopK_10):
    attributes = {"axis": -1, "largest": 1, "sorted": 1}
