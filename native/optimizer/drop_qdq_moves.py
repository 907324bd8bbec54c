"""DequantizeLinear -> Flatten / Reshape / Squeeze / Unsqueeze / Transpose / MaxPool ->
QuantizeLinear with one scale and zero point: the operator on the quantized values, as
onnxruntime's QDQ fusion does at its extended level.  The moves only move elements and
MaxPool picks one of them (dequantizing with a positive scale keeps their order; padding
is never picked), and quantizing a dequantized 8-bit value with its own scale and zero
point gives it back (|x - zp| <= 255: the float round trip is off by far less than half a
unit), so the result is the same bits without the two conversions, and a quantized tensor
reaches the integer kernel after it (the Flatten between a CNN's pooling and its QGemm,
the MaxPool after ResNet's stem).

The pattern: the move's data input a DequantizeLinear, its output read by one
QuantizeLinear only, both with the same constant per-tensor scale and zero point (the
same values) and 8-bit types; the DequantizeLinear goes if nothing else reads it."""

import numpy as np

from ._util import drop_unread_dequantize, variable_names
from .fuse_qdq_conv import _plain, _qparams

LEVEL = 2
ORDER = 44
MOVES = {"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "MaxPool"}
_TYPES = {2: np.dtype(np.uint8), 3: np.dtype(np.int8)}


def apply(graph, context) -> int:
    if not any(n.op_type == "QuantizeLinear" for n in graph.nodes):
        return 0
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    readers = {name: [graph.nodes[i] for i in idx] for name, idx in graph.consumers().items()}
    done, removed = 0, set()
    for move in graph.nodes:
        if move.op_type not in MOVES or move.domain != "" or not move.input or move.output[0] in outputs:
            continue
        if move.op_type == "MaxPool" and len([o for o in move.output if o]) != 1:
            continue  # (with its indices output: left as written)
        rs = readers.get(move.output[0], [])
        if len(rs) != 1 or not _plain(rs[0], "QuantizeLinear") or rs[0].input[0] != move.output[0]:
            continue
        q, dx = rs[0], producer.get(move.input[0])
        if not _plain(dx, "DequantizeLinear") or id(dx) in removed:
            continue
        xp, yp = _qparams(graph, dx, variable), _qparams(graph, q, variable)
        if xp is None or yp is None or xp[0].size != 1 or yp[0].size != 1 or xp[0].reshape(()) != yp[0].reshape(()):
            continue
        if not xp[0].reshape(()) > 0:
            continue  # (a scale of 0, negative or NaN: the round trip is not the identity)
        known = graph.type_of(dx.input[0])
        x_type = xp[1].dtype if xp[1] is not None else (_TYPES.get(known.elem_type) if known is not None else None)
        y_type = yp[1].dtype if yp[1] is not None else np.dtype(np.uint8)
        if x_type not in _TYPES.values() or y_type != x_type:
            continue
        xz = xp[1].reshape(()) if xp[1] is not None else x_type.type(0)
        yz = yp[1].reshape(()) if yp[1] is not None else y_type.type(0)
        if xz != yz:
            continue
        move.input[0] = dx.input[0]
        move.output[0] = q.output[0]
        removed.add(id(q))
        if dx.output[0] not in outputs and len(readers.get(dx.output[0], [])) == 1:
            removed.add(id(dx))
        done += 1
    if done:
        graph.nodes[:] = [n for n in graph.nodes if id(n) not in removed]
        drop_unread_dequantize(graph)
    return done
