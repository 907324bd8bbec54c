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

from ._util import constant, drop_unread_dequantize, variable_names
from .fuse_qdq_conv import _EIGHT, _attrs, _plain, _qparams

LEVEL = 1   # (does nothing below level 2: see apply)
ORDER = 17
_TYPES = {2: np.dtype(np.uint8), 3: np.dtype(np.int8)}


def _b_params(graph, dq, variable, b):
    """(scale, zero point) of b's DequantizeLinear: per tensor, or per column of a constant
    2-D b (axis 1), both reshaped to (1, N) for QLinearMatMul."""
    s = constant(graph, dq.input[1], variable)
    z = constant(graph, dq.input[2], variable) if len(dq.input) > 2 and dq.input[2] else None
    if s is None or s.dtype != np.float32 or (len(dq.input) > 2 and dq.input[2] and z is None):
        return None
    if s.size == 1:
        return (s, z) if z is None or z.size == 1 else None
    if b is None or b.ndim != 2 or _attrs(dq).get("axis", 1) != 1 or s.shape != (b.shape[1],):
        return None
    return (s, z) if z is None or z.shape == s.shape else None


def _type(graph, name, params):
    if params[1] is not None:
        return params[1].dtype
    known = graph.type_of(name)
    return _TYPES.get(known.elem_type) if known is not None else None


def apply(graph, context) -> int:
    if getattr(context, "level", 99) < 2 or not any(n.op_type == "QuantizeLinear" for n in graph.nodes):
        return 0
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    readers = {name: [graph.nodes[i] for i in idx] for name, idx in graph.consumers().items()}
    fused, removed, replace, names = 0, set(), {}, 0
    for mm in graph.nodes:
        if mm.op_type != "MatMul" or mm.domain != "" or len(mm.input) != 2 or mm.output[0] in outputs:
            continue
        rs = readers.get(mm.output[0], [])
        if len(rs) != 1 or not _plain(rs[0], "QuantizeLinear") or rs[0].input[0] != mm.output[0]:
            continue
        q = rs[0]
        da, db = producer.get(mm.input[0]), producer.get(mm.input[1])
        if not (_plain(da, "DequantizeLinear") and _plain(db, "DequantizeLinear")):
            continue
        b = constant(graph, db.input[0], variable)
        ap, bp, yp = _qparams(graph, da, variable), _b_params(graph, db, variable, b), _qparams(graph, q, variable)
        if ap is None or bp is None or yp is None or ap[0].size != 1 or yp[0].size != 1:
            continue
        a_type, b_type = _type(graph, da.input[0], ap), _type(graph, db.input[0], bp)
        y_type = yp[1].dtype if yp[1] is not None else np.dtype(np.uint8)
        if a_type not in _EIGHT or b_type not in _EIGHT or y_type not in _EIGHT:
            continue
        if b is not None and b.dtype != b_type:
            continue

        def param(node, params, dtype, shape=None):
            """The scale and zero point inputs (made where absent, or reshaped to (1, N))."""
            nonlocal names
            s, z = params
            s_name = node.input[1]
            z_name = node.input[2] if len(node.input) > 2 and node.input[2] else None
            if shape is not None or z_name is None:
                z = np.zeros(s.shape, dtype) if z is None else z
                if shape is not None:
                    s_name, names = f"{mm.output[0]}__qdq_scale_{names}", names + 1
                    graph.initializers[s_name] = s.reshape(shape)
                z_name, names = f"{mm.output[0]}__qdq_zero_{names}", names + 1
                graph.initializers[z_name] = np.asarray(z, dtype).reshape(shape if shape is not None else s.shape)
            return [s_name, z_name]

        column = (1, bp[0].size) if bp[0].size > 1 else None
        ins = [da.input[0], *param(da, ap, a_type), db.input[0], *param(db, bp, b_type, column),
               *param(q, yp, y_type)]
        node = helper.make_node("QLinearMatMul", ins, [q.output[0]], name=(mm.name or mm.output[0]) + "_qlinear")
        replace[id(mm)] = node
        removed.add(id(q))
        fused += 1
        for d in (da, db):  # a dequantization only this MatMul read
            if d.output[0] not in outputs and len(readers.get(d.output[0], [])) == 1:
                removed.add(id(d))
    if fused:
        graph.nodes[:] = [replace.get(id(n), n) for n in graph.nodes if id(n) not in removed]
        drop_unread_dequantize(graph)
        used = graph.names_read()
        for name in list(graph.initializers):  # (the dequantized weights' constants, now unread)
            if name not in used and name not in {v.name for v in graph.overridable}:
                del graph.initializers[name]
    return fused
