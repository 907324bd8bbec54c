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

from ._util import constant, drop_unread_dequantize, variable_names
from .fuse_qdq_conv import _EIGHT, _attrs, _plain, _qparams

LEVEL = 1   # (does nothing below level 2: see apply)
ORDER = 16
_TYPES = {2: np.dtype(np.uint8), 3: np.dtype(np.int8)}


def _per_column(graph, dq, variable, n: int, trans_b: int):
    """(scale, zero point) of b's DequantizeLinear: per tensor, or per column of B' (axis 0
    of a transposed B, 1 of a plain one) reshaped to (n,)."""
    s = constant(graph, dq.input[1], variable)
    if s is not None and s.size > 1:
        want_axis = 0 if trans_b else 1
        if _attrs(dq).get("axis", 1) != want_axis or s.shape != (n,):
            return None
    z = constant(graph, dq.input[2], variable) if len(dq.input) > 2 and dq.input[2] else None
    if s is None or s.dtype != np.float32 or (len(dq.input) > 2 and dq.input[2] and z is None):
        return None
    if z is not None and z.shape != s.shape and not (z.size == 1 and s.size == 1):
        return None
    return s, z


def apply(graph, context) -> int:
    if getattr(context, "level", 99) < 2 or not any(n.op_type == "QuantizeLinear" for n in graph.nodes):
        return 0
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    readers = {name: [graph.nodes[i] for i in idx] for name, idx in graph.consumers().items()}
    fused, removed, replace, zeros = 0, set(), {}, 0
    for gemm in graph.nodes:
        if gemm.op_type != "Gemm" or gemm.domain != "" or len(gemm.input) < 2 or gemm.output[0] in outputs:
            continue
        attrs = _attrs(gemm)
        if attrs.get("beta", 1.0) != 1.0 and len(gemm.input) > 2 and gemm.input[2]:
            continue
        rs = readers.get(gemm.output[0], [])
        if len(rs) != 1 or not _plain(rs[0], "QuantizeLinear") or rs[0].input[0] != gemm.output[0]:
            continue
        q = rs[0]
        da, db = producer.get(gemm.input[0]), producer.get(gemm.input[1])
        dc = producer.get(gemm.input[2]) if len(gemm.input) > 2 and gemm.input[2] else None
        if not (_plain(da, "DequantizeLinear") and _plain(db, "DequantizeLinear")) or da is db:
            continue
        if len(gemm.input) > 2 and gemm.input[2] and not _plain(dc, "DequantizeLinear"):
            continue
        b = constant(graph, db.input[0], variable)
        if b is None or b.dtype not in _EIGHT or b.ndim != 2:
            continue
        trans_b = int(attrs.get("transB", 0))
        n = b.shape[0] if trans_b else b.shape[1]
        ap, bp, yp = _qparams(graph, da, variable), _per_column(graph, db, variable, n, trans_b), _qparams(graph, q, variable)
        if ap is None or bp is None or yp is None:
            continue
        a_known = graph.type_of(da.input[0])
        a_type = ap[1].dtype if ap[1] is not None else (_TYPES.get(a_known.elem_type) if a_known is not None else None)
        y_type = yp[1].dtype if yp[1] is not None else np.dtype(np.uint8)
        if a_type not in _EIGHT or y_type != a_type or (a_type == np.int8 and b.dtype != np.int8):
            continue  # (QGemm: y of A's type; an int8 A takes an int8 B)
        if ap[1] is not None and a_known is not None and a_known.elem_type and _TYPES.get(a_known.elem_type) != a_type:
            continue
        bias = None
        if dc is not None:
            c = constant(graph, dc.input[0], variable)
            cp = _qparams(graph, dc, variable, n)
            if c is None or c.dtype != np.int32 or c.shape not in ((n,), (1, n)) or cp is None:
                continue
            if cp[1] is not None and np.any(cp[1] != 0):
                continue
            want = (ap[0].reshape(()) * bp[0]).astype(np.float32)  # the bias scale QGemm implies
            if not np.array_equal(np.broadcast_to(cp[0], (n,)), np.broadcast_to(want, (n,))):
                continue
            bias = dc.input[0]

        def zp(node, dtype, scale):
            nonlocal zeros
            if len(node.input) > 2 and node.input[2]:
                return node.input[2]
            name = f"{gemm.output[0]}__qdq_zero_{zeros}"
            zeros += 1
            graph.initializers[name] = np.zeros(np.shape(scale), dtype)
            return name

        ins = [da.input[0], da.input[1], zp(da, a_type, ap[0]), db.input[0], db.input[1], zp(db, b.dtype, bp[0]),
               bias or "", q.input[1], zp(q, y_type, yp[0])]
        kept = {k: v for k, v in attrs.items() if k in ("alpha", "transA", "transB")}
        node = helper.make_node("QGemm", ins, [q.output[0]], name=(gemm.name or gemm.output[0]) + "_qgemm",
                                domain="com.microsoft", **kept)
        replace[id(gemm)] = node
        removed.add(id(q))
        fused += 1
        for d in (da, db, dc):  # a dequantization only this Gemm read
            if d is not None and d.output[0] not in outputs and len(readers.get(d.output[0], [])) == 1:
                removed.add(id(d))
    if fused:
        graph.nodes[:] = [replace.get(id(n), n) for n in graph.nodes if id(n) not in removed]
        drop_unread_dequantize(graph)
        graph.opsets.setdefault("com.microsoft", 1)
        used = graph.names_read()
        for name in list(graph.initializers):  # (the dequantized weights' constants, now unread)
            if name not in used and name not in {v.name for v in graph.overridable}:
                del graph.initializers[name]
    return fused
