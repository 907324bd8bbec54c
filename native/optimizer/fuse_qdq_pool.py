"""DequantizeLinear -> GlobalAveragePool -> QuantizeLinear -> com.microsoft
QLinearGlobalAveragePool: in a QDQ model (a CNN's pooling before its classifier), the
average of the quantized values instead of the float one of their dequantized values, as
onnxruntime's QDQ fusion does at its extended level.

The pattern: GlobalAveragePool(DequantizeLinear(x_q)) whose output only one QuantizeLinear
reads, both scales and zero points per tensor and constant, x_q and y of one 8-bit type.
QLinearGlobalAveragePool sums exactly and requantizes in float as onnxruntime's kernel
does (kernels/ms_qlinear.c).  The DequantizeLinear goes if nothing else reads it."""

import numpy as np
from onnx import helper

from ._util import drop_unread_dequantize, variable_names
from .fuse_qdq_conv import _plain, _qparams

LEVEL = 2
ORDER = 46
_TYPES = {2: np.dtype(np.uint8), 3: np.dtype(np.int8)}


def apply(graph, context) -> int:
    if not any(n.op_type == "QuantizeLinear" for n in graph.nodes):
        return 0
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    readers = {name: [graph.nodes[i] for i in idx] for name, idx in graph.consumers().items()}
    fused, removed, replace, zeros = 0, set(), {}, 0
    for pool in graph.nodes:
        if pool.op_type != "GlobalAveragePool" or pool.domain != "" or pool.output[0] in outputs:
            continue
        rs = readers.get(pool.output[0], [])
        if len(rs) != 1 or not _plain(rs[0], "QuantizeLinear") or rs[0].input[0] != pool.output[0]:
            continue
        q, dx = rs[0], producer.get(pool.input[0])
        if not _plain(dx, "DequantizeLinear"):
            continue
        xp, yp = _qparams(graph, dx, variable), _qparams(graph, q, variable)
        if xp is None or yp is None or xp[0].size != 1 or yp[0].size != 1:
            continue
        known = graph.type_of(dx.input[0])
        x_type = xp[1].dtype if xp[1] is not None else (_TYPES.get(known.elem_type) if known is not None else None)
        y_type = yp[1].dtype if yp[1] is not None else np.dtype(np.uint8)
        if x_type not in _TYPES.values() or y_type != x_type:
            continue
        if known is not None and known.shape is not None and len(known.shape) < 3:
            continue
        ins = []
        for node, (s, z), t in ((dx, xp, x_type), (q, yp, y_type)):
            name = node.input[2] if len(node.input) > 2 and node.input[2] else None
            if name is None:
                name = f"{pool.output[0]}__qdq_zero_{zeros}"
                zeros += 1
                graph.initializers[name] = np.zeros((), t)
            ins += [node.input[1], name]
        node = helper.make_node("QLinearGlobalAveragePool", [dx.input[0], *ins], [q.output[0]],
                                name=(pool.name or pool.output[0]) + "_qlinear", domain="com.microsoft",
                                channels_last=0)
        replace[id(pool)] = node
        removed.add(id(q))
        fused += 1
        if dx.output[0] not in outputs and len(readers.get(dx.output[0], [])) == 1:
            removed.add(id(dx))
    if fused:
        graph.nodes[:] = [replace.get(id(n), n) for n in graph.nodes if id(n) not in removed]
        drop_unread_dequantize(graph)
        graph.opsets.setdefault("com.microsoft", 1)
    return fused
