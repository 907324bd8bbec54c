"""DequantizeLinear -> Conv -> QuantizeLinear -> QLinearConv: in a QDQ model, the integer
convolution of the quantized tensors instead of the float one of their dequantized
values, as onnxruntime's QDQ fusion does at its extended level.

The pattern: a Conv of DequantizeLinear(x_q) and DequantizeLinear(w_q) (and optionally
DequantizeLinear(b_q)) whose output only one QuantizeLinear reads; x's and y's scales
and zero points per tensor and constant, w_q a constant int8 / uint8 initializer with a
per-tensor or per-output-channel (axis 0) constant scale and zero point, the bias a
constant int32 initializer dequantized with zero point 0 and scale x_scale * w_scale
(as float32: what QLinearConv's bias means).  QLinearConv then computes the exact integer
sum and requantizes it (docs/undefined.md): onnxruntime's result for the fused graph,
which can differ by a unit from the float graph's.  The DequantizeLinear nodes nothing
else reads go.

A rewrite of the extended level (it changes the arithmetic): it runs with the basic
passes, before constant folding would turn the weights' DequantizeLinear into float
weights, and only when the session optimizes at the extended level or above."""

import numpy as np
from onnx import helper

from ._util import constant, drop_unread_dequantize, variable_names

LEVEL = 1   # (runs before constant_folding's ORDER, but does nothing below level 2: see apply)
ORDER = 15
_EIGHT = (np.dtype(np.int8), np.dtype(np.uint8))
_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def _attrs(node) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _plain(node, op_type) -> bool:
    """op_type of the default domain with no attributes but a per-tensor / per-axis axis."""
    if node is None or node.op_type != op_type or node.domain != "":
        return False
    extra = set(_attrs(node)) - {"axis", "saturate"}
    return not extra and _attrs(node).get("saturate", 1) == 1


def _qparams(graph, node, variable, channels=None):
    """(scale, zero point as an array or None) of a DequantizeLinear / QuantizeLinear when
    both are constants, the scale float32 and per tensor (or, with `channels`, per axis 0
    of that many), else None."""
    s = constant(graph, node.input[1], variable)
    z = constant(graph, node.input[2], variable) if len(node.input) > 2 and node.input[2] else None
    if s is None or s.dtype != np.float32 or (len(node.input) > 2 and node.input[2] and z is None):
        return None
    if s.size != 1:
        axis = _attrs(node).get("axis", 1)
        if channels is None or s.shape != (channels,) or axis != 0:
            return None
    if z is not None and (z.shape != s.shape and not (z.size == 1 and s.size == 1)):
        return None
    return s, z


def apply(graph, context) -> int:
    if getattr(context, "level", 99) < 2 or not any(n.op_type == "QuantizeLinear" for n in graph.nodes):
        return 0
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    consumers = graph.consumers()
    readers = {name: [graph.nodes[i] for i in idx] for name, idx in consumers.items()}
    fused, removed = 0, set()
    replace = {}  # id(conv) -> the QLinearConv node
    for conv in graph.nodes:
        if conv.op_type != "Conv" or conv.domain != "" or len(conv.input) < 2 or id(conv) in removed:
            continue
        y = conv.output[0]
        rs = readers.get(y, [])
        if y in outputs or len(rs) != 1 or not _plain(rs[0], "QuantizeLinear") or rs[0].input[0] != y:
            continue
        q = rs[0]
        dx, dw = producer.get(conv.input[0]), producer.get(conv.input[1])
        db = producer.get(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        if not (_plain(dx, "DequantizeLinear") and _plain(dw, "DequantizeLinear")):
            continue
        if len(conv.input) > 2 and conv.input[2] and not _plain(db, "DequantizeLinear"):
            continue
        w = constant(graph, dw.input[0], variable)
        if w is None or w.dtype not in _EIGHT or w.ndim < 3:
            continue
        xp, wp, yp = _qparams(graph, dx, variable), _qparams(graph, dw, variable, w.shape[0]), _qparams(graph, q, variable)
        if xp is None or wp is None or yp is None:
            continue
        x_type = graph.type_of(dx.input[0])
        if xp[1] is not None and xp[1].dtype not in _EIGHT or yp[1] is not None and yp[1].dtype not in _EIGHT:
            continue
        if xp[1] is None and (x_type is None or x_type.elem_type not in (2, 3)):  # uint8 / int8
            continue
        if xp[1] is not None and x_type is not None and x_type.elem_type and x_type.elem_type != {
                np.dtype(np.uint8): 2, np.dtype(np.int8): 3}[xp[1].dtype]:
            continue
        bias = None
        if db is not None:
            b = constant(graph, db.input[0], variable)
            bp = _qparams(graph, db, variable, w.shape[0])
            if b is None or b.dtype != np.int32 or b.shape != (w.shape[0],) or bp is None:
                continue
            if bp[1] is not None and np.any(bp[1] != 0):
                continue
            want = (xp[0].reshape(()) * wp[0]).astype(np.float32)  # the bias scale QLinearConv implies
            if not np.array_equal(np.broadcast_to(bp[0], (w.shape[0],)), np.broadcast_to(want, (w.shape[0],))):
                continue
            bias = db.input[0]
        zero = {}  # absent zero points: 0 of the quantized type

        def zp(node, dtype, scale):
            if len(node.input) > 2 and node.input[2]:
                return node.input[2]
            name = f"{conv.output[0]}__qdq_zero_{len(zero)}"
            graph.initializers[name] = np.zeros(np.shape(scale), dtype)
            zero[name] = True
            return name

        x_dtype = xp[1].dtype if xp[1] is not None else np.dtype(np.uint8 if x_type.elem_type == 2 else np.int8)
        ins = [dx.input[0], dx.input[1], zp(dx, x_dtype, xp[0]), dw.input[0], dw.input[1], zp(dw, w.dtype, wp[0]),
               q.input[1], zp(q, np.uint8, yp[0])]
        if bias is not None:
            ins.append(bias)
        attrs = {k: v for k, v in _attrs(conv).items() if k in _CONV_ATTRS}
        node = helper.make_node("QLinearConv", ins, [q.output[0]], name=(conv.name or y) + "_qlinear", **attrs)
        replace[id(conv)] = node
        removed.add(id(q))
        fused += 1
        for d in (dx, dw, db):  # a dequantization only this Conv read
            if d is not None and d.output[0] not in outputs and len(readers.get(d.output[0], [])) == 1:
                removed.add(id(d))
    if fused:
        graph.nodes[:] = [replace.get(id(n), n) for n in graph.nodes if id(n) not in removed]
        drop_unread_dequantize(graph)
        used = graph.names_read()
        for name in list(graph.initializers):  # (the dequantized weights' constants, now unread)
            if name not in used and name not in {v.name for v in graph.overridable}:
                del graph.initializers[name]
    return fused
