"""DequantizeLinear -> Add -> QuantizeLinear -> com.microsoft QLinearAdd: in a QDQ model,
the quantized addition instead of the float one of dequantized values (a residual
connection), as onnxruntime's QDQ fusion does at its extended level.

The pattern: Add(DequantizeLinear(a_q), DequantizeLinear(b_q)) whose output only one
QuantizeLinear reads, every scale and zero point per tensor and constant, a, b and the
result of one 8-bit type.  QLinearAdd computes in float as onnxruntime's does
(kernels/ms_qlinear.c), which can differ by a unit from the float graph's rounding.
The DequantizeLinear nodes nothing else reads go."""

import numpy as np
from onnx import helper

from ._util import drop_unread_dequantize, variable_names
from .fuse_qdq_conv import _plain, _qparams

LEVEL = 2
ORDER = 45
_TYPES = {2: np.dtype(np.uint8), 3: np.dtype(np.int8)}


def apply(graph, context) -> int:
    if not any(n.op_type == "QuantizeLinear" for n in graph.nodes):
        return 0
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    readers = {name: [graph.nodes[i] for i in idx] for name, idx in graph.consumers().items()}
    fused, removed, replace, zeros = 0, set(), {}, 0
    for add in graph.nodes:
        if add.op_type != "Add" or add.domain != "" or len(add.input) != 2 or add.output[0] in outputs:
            continue
        rs = readers.get(add.output[0], [])
        if len(rs) != 1 or not _plain(rs[0], "QuantizeLinear") or rs[0].input[0] != add.output[0]:
            continue
        q = rs[0]
        da, db = producer.get(add.input[0]), producer.get(add.input[1])
        if not (_plain(da, "DequantizeLinear") and _plain(db, "DequantizeLinear")) or da is db:
            continue
        params = [_qparams(graph, n, variable) for n in (da, db, q)]
        if any(p is None for p in params):
            continue
        types = []
        for n, (s, z) in zip((da, db, q), params):
            t = z.dtype if z is not None else None
            if n is not q and t is None:
                known = graph.type_of(n.input[0])
                t = _TYPES.get(known.elem_type) if known is not None else None
            types.append(t if t is not None or n is not q else np.dtype(np.uint8))
        if any(t not in _TYPES.values() for t in types) or len(set(types)) != 1:
            continue
        ins = []
        for n, (s, z), t in zip((da, db, q), params, types):
            zp = n.input[2] if len(n.input) > 2 and n.input[2] else None
            if zp is None:
                zp = f"{add.output[0]}__qdq_zero_{zeros}"
                zeros += 1
                graph.initializers[zp] = np.zeros((), t)
            ins += ([n.input[0]] if n is not q else []) + [n.input[1], zp]
        node = helper.make_node("QLinearAdd", ins, [q.output[0]], name=(add.name or add.output[0]) + "_qlinear",
                                domain="com.microsoft")
        replace[id(add)] = node
        removed.add(id(q))
        fused += 1
        for d in (da, db):
            if d.output[0] not in outputs and len(readers.get(d.output[0], [])) == 1:
                removed.add(id(d))
    if fused:
        graph.nodes[:] = [replace.get(id(n), n) for n in graph.nodes if id(n) not in removed]
        drop_unread_dequantize(graph)
        graph.opsets.setdefault("com.microsoft", 1)
    return fused
