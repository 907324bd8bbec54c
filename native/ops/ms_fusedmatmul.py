"""FusedMatMul (com.microsoft, as onnxruntime): Y = alpha * A' B', A' = A or (transA) A
with its last two dims swapped, B' likewise; MatMul's broadcasting otherwise.  The
transBatch attributes (batch dims moved next to the matrix) are not supported."""

import numpy as np

from ... import _errors
from ._base import Info, Launch, Op, broadcast_shape, broadcast_view


class FusedMatMul(Op):
    domain = "com.microsoft"
    attributes = {"alpha": 1.0, "transA": 0, "transB": 0, "transBatchA": 0, "transBatchB": 0}
    params = "mlrt_fused_matmul_params"
    tolerance = (1e-4, 1e-4)  # float32 sums over K: both sides round, in different orders

    def _shapes(self, inputs):
        a, b = self.need(inputs, 0), self.need(inputs, 1)
        if self.a.transBatchA or self.a.transBatchB:
            raise _errors.NotImplemented(f"{self.where}: transBatchA / transBatchB are not supported")
        if np.dtype(a.dtype) != np.dtype(b.dtype):
            raise self.fail(f"inputs have different element types: {np.dtype(a.dtype).name}, {np.dtype(b.dtype).name}")
        if a.rank == 0 or b.rank == 0:
            raise self.fail("FusedMatMul needs inputs of rank >= 1")
        if (a.rank == 1 and self.a.transA) or (b.rank == 1 and self.a.transB):
            raise _errors.NotImplemented(f"{self.where}: transA / transB of a 1-D input are not supported")
        sa = tuple(a.shape) if a.rank >= 2 else (1,) + tuple(a.shape)
        sb = tuple(b.shape) if b.rank >= 2 else tuple(b.shape) + (1,)
        m, k = sa[-1:-3:-1] if self.a.transA else sa[-2:]
        kb, n = sb[-1:-3:-1] if self.a.transB else sb[-2:]
        if k != kb:
            raise self.fail(f"shapes {a.shape} and {b.shape} do not multiply (inner dimensions {k} and {kb})")
        batch = broadcast_shape(sa[:-2], sb[:-2], where=self.where)
        out = batch + ((m,) if a.rank >= 2 else ()) + ((n,) if b.rank >= 2 else ())
        return a, sa, sb, batch, out

    def infer(self, inputs):
        a, _, _, _, out = self._shapes(inputs)
        return [Info(a.dtype, out)]

    def launch(self, inputs, outputs):
        _, sa, sb, batch, _ = self._shapes(inputs)
        views = {0: broadcast_view(sa, batch + sa[-2:]), 1: broadcast_view(sb, batch + sb[-2:])}
        params = {"alpha": float(self.a.alpha), "trans_a": int(self.a.transA), "trans_b": int(self.a.transB)}
        return Launch("FusedMatMul", params, views)
