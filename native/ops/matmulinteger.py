"""MatMulInteger: int32 Y = (A - a_zero_point) @ (B - b_zero_point), numpy.matmul shapes.

A and B are int8 / uint8; the zero points are per tensor, per row of A ((M,) or
[..., M, 1]) and per column of B ((N,) or [..., 1, N]).  The int32 accumulation wraps.
A constant 2-D B is packed once for the integer product and handed to the kernel after
the node's inputs (`packed_b` names the input)."""

import numpy as np

from ._base import Info, Launch, Op
from ._quant import EIGHT_BIT, MatMulGeometry, check_types, packed_matmul_b, same_type


class MatMulInteger(Op):
    params = "mlrt_qmatmul_params"

    def _geometry(self, inputs):
        a, b = self.need(inputs, 0), self.need(inputs, 1)
        az = inputs[2] if len(inputs) > 2 else None
        bz = inputs[3] if len(inputs) > 3 else None
        check_types(self, [a, b, az, bz], ("A", "B", "a_zero_point", "b_zero_point"), EIGHT_BIT)
        same_type(self, a, az, "A and a_zero_point")
        same_type(self, b, bz, "B and b_zero_point")
        return MatMulGeometry(self, a, b), az, bz

    def infer(self, inputs):
        g, _, _ = self._geometry(inputs)
        return [Info(np.dtype(np.int32), g.out)]

    def launch(self, inputs, outputs):
        g, az, bz = self._geometry(inputs)
        views = {0: g.a_view(), 1: g.b_view()}
        if az is not None:
            views[2] = g.side_view(az, "a", "a_zero_point")
        if bz is not None:
            views[3] = g.side_view(bz, "b", "b_zero_point")
        packed = packed_matmul_b(self, inputs[1])
        launch = Launch("MatMulInteger", {"packed_b": len(inputs) if packed is not None else 0}, views)
        if packed is not None:
            launch.extra.append(packed)
        return launch
