"""DequantizeLinear -> MatMul -> QuantizeLinear -> QLinearMatMul: in a QDQ model (a
transformer's projections and attention products), the integer product of the quantized
tensors instead of the float one of their dequantized values, as onnxruntime's QDQ fusion
does at its extended level.

The pattern: MatMul(DequantizeLinear(a_q), DequantizeLinear(b_q)) whose output only one
QuantizeLinear reads; every scale and zero point per tensor and constant, except a constant
2-D b_q's, which may be per column (axis 1, N of them); 8-bit a, b and y.  QLinearMatMul
computes the exact integer sum and requantizes it in float32 (docs/undefined.md):
onnxruntime's result for the fused graph.  The DequantizeLinear nodes nothing else reads
go.  Like fuse_qdq_conv, a rewrite of the extended level run with the basic passes (before
constant folding turns a constant b's DequantizeLinear into float weights)."""

import numpy as np
from onnx import helper

from ._qdq import EIGHT, Rewrite, quantizes
from ._util import attrs

LEVEL = 1   # (does nothing below level 2: see apply)
ORDER = 17


def _b_params(qdq, dq, b):
    """(scale, zero point) of b's DequantizeLinear: per tensor, or per column of a constant
    2-D b (axis 1), both reshaped to (1, N) for QLinearMatMul."""
    s = qdq.constant(dq.input[1])
    z = qdq.constant(dq.input[2]) if len(dq.input) > 2 and dq.input[2] else None
    if s is None or s.dtype != np.float32 or (len(dq.input) > 2 and dq.input[2] and z is None):
        return None
    if s.size == 1:
        return (s, z) if z is None or z.size == 1 else None
    if b is None or b.ndim != 2 or attrs(dq).get("axis", 1) != 1 or s.shape != (b.shape[1],):
        return None
    return (s, z) if z is None or z.shape == s.shape else None


def _inputs(qdq, mm, node, params, dtype, shape=None) -> list[str]:
    """node's scale and zero point inputs (made where absent, or reshaped to `shape`)."""
    s, z = params
    s_name = node.input[1]
    z_name = node.input[2] if len(node.input) > 2 and node.input[2] else None
    if shape is not None or z_name is None:
        z = np.zeros(s.shape, dtype) if z is None else z
        if shape is not None:
            s_name = qdq.initializer(mm, "scale", s.reshape(shape))
        z_name = qdq.initializer(mm, "zero", np.asarray(z, dtype).reshape(shape if shape is not None else s.shape))
    return [s_name, z_name]


def apply(graph, context) -> int:
    if getattr(context, "level", 99) < 2 or not quantizes(graph):
        return 0
    qdq = Rewrite(graph)
    for mm in graph.nodes:
        if mm.op_type != "MatMul" or mm.domain != "" or len(mm.input) != 2:
            continue
        q, da, db = qdq.quantized_by(mm), qdq.dequantized(mm.input[0]), qdq.dequantized(mm.input[1])
        if q is None or da is None or db is None:
            continue
        b = qdq.constant(db.input[0])
        ap, bp, yp = qdq.params(da), _b_params(qdq, db, b), qdq.params(q)
        if ap is None or bp is None or yp is None or ap[0].size != 1 or yp[0].size != 1:
            continue
        a_type, b_type, y_type = qdq.input_type(da, ap), qdq.input_type(db, bp), qdq.output_type(yp)
        if a_type not in EIGHT or b_type not in EIGHT or y_type not in EIGHT:
            continue
        if b is not None and b.dtype != b_type:
            continue
        column = (1, bp[0].size) if bp[0].size > 1 else None
        ins = [da.input[0], *_inputs(qdq, mm, da, ap, a_type), db.input[0], *_inputs(qdq, mm, db, bp, b_type, column),
               *_inputs(qdq, mm, q, yp, y_type)]
        node = helper.make_node("QLinearMatMul", ins, [q.output[0]], name=(mm.name or mm.output[0]) + "_qlinear")
        qdq.replaced(mm, node, q, (da, db))
    return qdq.finish(prune=True)  # (prune: the dequantized weights' constants, now unread)
