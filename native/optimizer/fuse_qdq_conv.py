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

from ._qdq import EIGHT, Rewrite, quantizes
from ._util import attrs

LEVEL = 1   # (runs before constant_folding's ORDER, but does nothing below level 2: see apply)
ORDER = 15
_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def apply(graph, context) -> int:
    if getattr(context, "level", 99) < 2 or not quantizes(graph):
        return 0
    qdq = Rewrite(graph)
    for conv in graph.nodes:
        if conv.op_type != "Conv" or conv.domain != "" or len(conv.input) < 2:
            continue
        has_bias = len(conv.input) > 2 and conv.input[2]
        q, dx, dw = qdq.quantized_by(conv), qdq.dequantized(conv.input[0]), qdq.dequantized(conv.input[1])
        db = qdq.dequantized(conv.input[2]) if has_bias else None
        if q is None or dx is None or dw is None or (has_bias and db is None):
            continue
        w = qdq.constant(dw.input[0])
        if w is None or w.dtype not in EIGHT or w.ndim < 3:
            continue
        xp, wp, yp = qdq.params(dx), qdq.params(dw, w.shape[0]), qdq.params(q)
        if xp is None or wp is None or yp is None:
            continue
        x_type, y_type = qdq.input_type(dx, xp), qdq.output_type(yp)
        if x_type not in EIGHT or y_type not in EIGHT or not qdq.declared_as(dx.input[0], x_type):
            continue
        if db is not None and not qdq.int32_bias(db, w.shape[0], xp[0], wp[0], ((w.shape[0],),)):
            continue
        ins = [dx.input[0], dx.input[1], qdq.zero_point(dx, x_type, np.shape(xp[0]), conv),
               dw.input[0], dw.input[1], qdq.zero_point(dw, w.dtype, np.shape(wp[0]), conv),
               q.input[1], qdq.zero_point(q, y_type, np.shape(yp[0]), conv)]
        if db is not None:
            ins.append(db.input[0])
        kept = {k: v for k, v in attrs(conv).items() if k in _CONV_ATTRS}
        node = helper.make_node("QLinearConv", ins, [q.output[0]], name=(conv.name or conv.output[0]) + "_qlinear",
                                **kept)
        qdq.replaced(conv, node, q, (dx, dw, db))
    return qdq.finish(prune=True)  # (prune: the dequantized weights' constants, now unread)
