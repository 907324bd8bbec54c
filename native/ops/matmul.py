"""MatMul: numpy.matmul semantics (batch dimensions broadcast, 1-D operands promoted
to a row / column and the extra dimension dropped from the result)."""

import numpy as np

from ._base import Info, Launch, Op, broadcast_shape, broadcast_view
from .gemm import WIDE_B, packed_strips


class MatMul(Op):
    tolerance = (1e-4, 1e-4)  # float32 sums over K: both sides round, in different orders

    def _transposes(self, a, b) -> tuple[bool, bool]:
        """Whether A's and B's last two dims are swapped before the product (FusedMatMul)."""
        return False, False

    def _shapes(self, inputs):
        a, b = self.need(inputs, 0), self.need(inputs, 1)
        if np.dtype(a.dtype) != np.dtype(b.dtype):
            raise self.fail(f"inputs have different element types: {np.dtype(a.dtype).name}, "
                            f"{np.dtype(b.dtype).name}")
        if a.rank == 0 or b.rank == 0:
            raise self.fail(f"{type(self).__name__} needs inputs of rank >= 1")
        ta, tb = self._transposes(a, b)
        sa = tuple(a.shape) if a.rank >= 2 else (1,) + tuple(a.shape)
        sb = tuple(b.shape) if b.rank >= 2 else tuple(b.shape) + (1,)
        m, k = sa[-1:-3:-1] if ta else sa[-2:]
        kb, n = sb[-1:-3:-1] if tb else sb[-2:]
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
        launch = Launch("MatMul", None, self._views(sa, sb, batch))
        packed = self._packed_b(inputs, sa)
        if packed is not None:
            launch.extra.append(packed)
        return launch

    def _packed_b(self, inputs, sa):
        """A constant, wide, 2-D float32 B packed once per node for a product of several
        rows (the kernel reads it where every batch shares B), else None."""
        b = inputs[1]
        if (type(self) is not MatMul or b.value is None or b.rank != 2 or np.dtype(b.dtype) != np.float32
                or b.shape[1] < WIDE_B or int(np.prod(sa[:-1])) < 2):
            return None
        cached = getattr(self, "_packed", None)
        if cached is None or cached[0] is not b.value:
            cached = self._packed = (b.value, packed_strips(b.value, False))
        return cached[1]

    @staticmethod
    def _views(sa, sb, batch):
        return {0: broadcast_view(sa, batch + sa[-2:]), 1: broadcast_view(sb, batch + sb[-2:])}
