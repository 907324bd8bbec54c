"""QGemm (com.microsoft, as onnxruntime): Y = alpha * (A' - a_zero_point) @ (B' - b_zero_point) + C,
requantized: y = saturate(round(acc * (alpha * a_scale * b_scale / y_scale)) + y_zero_point).

A' and B' are A and B transposed where transA / transB say; A is uint8 (B uint8 or int8) or
int8 (B int8); a's scale and zero point are per tensor, b's per tensor or per column (N).
C, optional, is int32 and broadcasts to (M, N).  Without y_zero_point Y is float:
acc * (alpha * a_scale * b_scale [/ y_scale]).  The product is exact in int32 (the
MatMulInteger kernel), the scale float in onnxruntime's order, rounding half to even: equal
to onnxruntime.  K = 0 gives C requantized (onnxruntime special-cases it).  A constant B
is packed once for the integer product and handed to the kernel after the node's inputs."""

import numpy as np

from ._base import Info, Launch, Op, View, broadcast_shape, broadcast_view
from ._quant import EIGHT_BIT, FLOAT, INT8, check_types, packed_matmul_b, same_type

INT32 = np.dtype(np.int32)


class QGemm(Op):
    domain = "com.microsoft"
    attributes = {"alpha": 1.0, "transA": 0, "transB": 0}
    params = "mlrt_qgemm_params"
    tolerance = (0, 0)  # exact

    def _geometry(self, inputs):
        ins = list(inputs) + [None] * (9 - len(inputs))
        for i in (0, 1, 3, 4):
            self.need(ins, i)
        a, a_s, a_z, b, b_s, b_z, c, y_s, y_z = ins
        check_types(self, ins, ("A", None, "a_zero_point", "B", None, "b_zero_point", None, None, "y_zero_point"),
                    EIGHT_BIT)
        same_type(self, a, a_z, "A and a_zero_point")
        same_type(self, b, b_z, "B and b_zero_point")
        same_type(self, a, y_z, "A and y_zero_point")
        if np.dtype(a.dtype) == INT8 and np.dtype(b.dtype) != INT8:
            raise self.fail(f"an int8 A takes an int8 B, got {np.dtype(b.dtype).name}")
        if a.rank != 2 or b.rank != 2:
            raise self.fail(f"A and B must be matrices, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
        m, k = (a.shape[1], a.shape[0]) if self.a.transA else tuple(a.shape)
        kb, n = (b.shape[1], b.shape[0]) if self.a.transB else tuple(b.shape)
        if k != kb:
            raise self.fail(f"A' {(m, k)} and B' {(kb, n)} do not multiply")
        for s, name in ((a_s, "a_scale"), (b_s, "b_scale"), (y_s, "y_scale")):
            if s is not None and np.dtype(s.dtype) != FLOAT:
                raise self.fail(f"{name} has type {np.dtype(s.dtype).name}, expected float")
        for t, name in ((a_s, "a_scale"), (a_z, "a_zero_point"), (y_s, "y_scale"), (y_z, "y_zero_point")):
            if t is not None and t.size != 1:
                raise self.fail(f"{name} must be per tensor (one element), got shape {tuple(t.shape)}")
        for t, name in ((b_s, "b_scale"), (b_z, "b_zero_point")):
            if t is not None and not (t.rank == 0 or (t.rank == 1 and t.shape[0] in (1, n))):
                raise self.fail(f"{name} must be a scalar or 1-D of 1 or N = {n} values, got shape {tuple(t.shape)}")
        if b_z is not None and tuple(b_z.shape) != tuple(b_s.shape):
            raise self.fail(f"b_scale {tuple(b_s.shape)} and b_zero_point {tuple(b_z.shape)} differ in shape")
        if c is not None:
            if np.dtype(c.dtype) != INT32:
                raise self.fail(f"C has type {np.dtype(c.dtype).name}, expected int32")
            if c.rank > 2 or broadcast_shape(c.shape, (m, n), where=self.where) != (m, n):
                raise self.fail(f"C of shape {tuple(c.shape)} does not broadcast to {(m, n)}")
        return (m, k, n), ins

    def infer(self, inputs):
        (m, _, n), ins = self._geometry(inputs)
        y_z = ins[8]
        return [Info(np.dtype(y_z.dtype) if y_z is not None else FLOAT, (m, n))]

    def launch(self, inputs, outputs):
        (m, k, n), ins = self._geometry(inputs)
        views = {0: View((m, k), (1, m) if self.a.transA else (k, 1)),
                 3: View((k, n), (1, k) if self.a.transB else (n, 1))}
        if ins[2] is not None:
            views[2] = View((m, k), (0, 0))
        if ins[5] is not None:
            views[5] = View((k, n), (0, 1 if ins[5].size > 1 else 0))
        if ins[6] is not None:
            views[6] = broadcast_view(ins[6].shape, (m, n))
        packed = packed_matmul_b(self, ins[3], transposed=bool(self.a.transB))
        launch = Launch("QGemm", {"alpha": float(self.a.alpha), "packed_b": len(inputs) if packed is not None else 0},
                        views)
        if packed is not None:
            launch.extra.append(packed)
        return launch
