"""DequantizeLinear -> Gemm -> QuantizeLinear -> com.microsoft QGemm: in a QDQ model (the
classifier head of a CNN, a transformer's projections), the integer product of the
quantized tensors instead of the float one of their dequantized values, as onnxruntime's
QDQ fusion does at its extended level.

The pattern: Gemm(DequantizeLinear(a_q), DequantizeLinear(b_q)[, DequantizeLinear(c_q)])
whose output only one QuantizeLinear reads; a's and y's scales and zero points per tensor
and constant, b_q a constant 8-bit matrix with a per-tensor or per-column (N) constant
scale and zero point, the bias a constant int32 initializer dequantized with zero point 0
and scale a_scale * b_scale (as float32: what QGemm's C means), beta 1.  QGemm computes
the exact integer sum and requantizes it (docs/undefined.md): onnxruntime's result for the
fused graph.  The DequantizeLinear nodes nothing else reads go.  Like fuse_qdq_conv, a
rewrite of the extended level run with the basic passes (before constant folding turns
b's DequantizeLinear into float weights)."""

import numpy as np
from onnx import helper

from ._qdq import EIGHT, Rewrite, quantizes
from ._util import attrs

LEVEL = 1   # (does nothing below level 2: see apply)
ORDER = 16


def _per_column(qdq, dq, n: int, trans_b: int):
    """(scale, zero point) of b's DequantizeLinear: per tensor, or per column of B' (axis 0
    of a transposed B, 1 of a plain one) reshaped to (n,)."""
    s = qdq.constant(dq.input[1])
    if s is not None and s.size > 1:
        want_axis = 0 if trans_b else 1
        if attrs(dq).get("axis", 1) != want_axis or s.shape != (n,):
            return None
    z = qdq.constant(dq.input[2]) if len(dq.input) > 2 and dq.input[2] else None
    if s is None or s.dtype != np.float32 or (len(dq.input) > 2 and dq.input[2] and z is None):
        return None
    if z is not None and z.shape != s.shape and not (z.size == 1 and s.size == 1):
        return None
    return s, z


def apply(graph, context) -> int:
    if getattr(context, "level", 99) < 2 or not quantizes(graph):
        return 0
    qdq = Rewrite(graph)
    for gemm in graph.nodes:
        if gemm.op_type != "Gemm" or gemm.domain != "" or len(gemm.input) < 2:
            continue
        has_bias = len(gemm.input) > 2 and gemm.input[2]
        gemm_attrs = attrs(gemm)
        if gemm_attrs.get("beta", 1.0) != 1.0 and has_bias:
            continue
        q, da, db = qdq.quantized_by(gemm), qdq.dequantized(gemm.input[0]), qdq.dequantized(gemm.input[1])
        dc = qdq.dequantized(gemm.input[2]) if has_bias else None
        if q is None or da is None or db is None or da is db or (has_bias and dc is None):
            continue
        b = qdq.constant(db.input[0])
        if b is None or b.dtype not in EIGHT or b.ndim != 2:
            continue
        trans_b = int(gemm_attrs.get("transB", 0))
        n = b.shape[0] if trans_b else b.shape[1]
        ap, bp, yp = qdq.params(da), _per_column(qdq, db, n, trans_b), qdq.params(q)
        if ap is None or bp is None or yp is None:
            continue
        a_type, y_type = qdq.input_type(da, ap), qdq.output_type(yp)
        if a_type not in EIGHT or y_type != a_type or (a_type == np.int8 and b.dtype != np.int8):
            continue  # (QGemm: y of A's type; an int8 A takes an int8 B)
        if not qdq.declared_as(da.input[0], a_type):
            continue
        if dc is not None and not qdq.int32_bias(dc, n, ap[0], bp[0], ((n,), (1, n))):
            continue
        ins = [da.input[0], da.input[1], qdq.zero_point(da, a_type, np.shape(ap[0]), gemm),
               db.input[0], db.input[1], qdq.zero_point(db, b.dtype, np.shape(bp[0]), gemm),
               dc.input[0] if dc is not None else "", q.input[1], qdq.zero_point(q, y_type, np.shape(yp[0]), gemm)]
        kept = {k: v for k, v in gemm_attrs.items() if k in ("alpha", "transA", "transB")}
        node = helper.make_node("QGemm", ins, [q.output[0]], name=(gemm.name or gemm.output[0]) + "_qgemm",
                                domain="com.microsoft", **kept)
        qdq.replaced(gemm, node, q, (da, db, dc))
    return qdq.finish(prune=True)  # (prune: the dequantized weights' constants, now unread)
