"""MatMul: numpy.matmul semantics (batch dimensions broadcast, 1-D operands promoted
to a row / column and the extra dimension dropped from the result)."""

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view


class MatMul(Op):
    tolerance = (1e-4, 1e-4)  # float32 sums over K: both sides round, in different orders

    def _shapes(self, inputs):
        a, b = self.need(inputs, 0), self.need(inputs, 1)
        if np.dtype(a.dtype) != np.dtype(b.dtype):
            raise self.fail(f"inputs have different element types: {np.dtype(a.dtype).name}, "
                            f"{np.dtype(b.dtype).name}")
        if a.rank == 0 or b.rank == 0:
            raise self.fail("MatMul needs inputs of rank >= 1")
        sa = a.shape if a.rank >= 2 else (1,) + tuple(a.shape)
        sb = b.shape if b.rank >= 2 else tuple(b.shape) + (1,)
        if sa[-1] != sb[-2]:
            raise self.fail(f"shapes {a.shape} and {b.shape} do not multiply (inner dimensions "
                            f"{sa[-1]} and {sb[-2]})")
        batch = broadcast_shape(sa[:-2], sb[:-2], where=self.where)
        out = batch + ((sa[-2],) if a.rank >= 2 else ()) + ((sb[-1],) if b.rank >= 2 else ())
        return a, sa, sb, batch, out

    def infer(self, inputs):
        a, _, _, _, out = self._shapes(inputs)
        return [Info(a.dtype, out)]

    def launch(self, inputs, outputs):
        _, sa, sb, batch, _ = self._shapes(inputs)
        views = {0: broadcast_view(sa, batch + tuple(sa[-2:])), 1: broadcast_view(sb, batch + tuple(sb[-2:]))}
        return Launch("MatMul", None, views)
