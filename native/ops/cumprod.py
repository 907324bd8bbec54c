"""CumProd: running products of x along the axis given by input 1 (a scalar),
optionally exclusive (each product leaves its own element out, the first is 1)
and/or in reverse.  Integers wrap; floats round at every step, like numpy."""

import numpy as np

from ._base import Info, Op, normalize_axis
from ._reduce import split_axis


class CumProd(Op):
    attributes = {"exclusive": 0, "reverse": 0}
    params = "mlrt_cumprod_params"
    value_inputs = (1,)
    tolerance = (1e-6, 1e-7)

    def _axis(self, inputs, rank) -> int:
        axis = np.asarray(self.value_of(inputs, 1))
        if axis.size != 1 or axis.ndim > 1 or axis.dtype.kind not in "iu":
            raise self.fail(f"axis must be an integer scalar, not {axis!r}")
        return normalize_axis(int(axis.reshape(-1)[0]), rank, self.where)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        self.need(inputs, 1)
        if x.rank == 0:
            raise self.fail("needs an input of rank 1 or more")
        self._axis(inputs, x.rank)
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        x = inputs[0]
        return {**split_axis(x.shape, self._axis(inputs, x.rank)),
                "exclusive": int(bool(self.a.exclusive)), "reverse": int(bool(self.a.reverse))}
