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

from ._qdq import TYPES, Rewrite, quantizes

LEVEL = 2
ORDER = 44
MOVES = {"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "MaxPool"}


def apply(graph, context) -> int:
    if not quantizes(graph):
        return 0
    qdq = Rewrite(graph)
    for move in graph.nodes:
        if move.op_type not in MOVES or move.domain != "" or not move.input:
            continue
        if move.op_type == "MaxPool" and len([o for o in move.output if o]) != 1:
            continue  # (with its indices output: left as written)
        q = qdq.quantized_by(move)
        dx = qdq.dequantized(move.input[0]) if q is not None else None
        if dx is None or id(dx) in qdq.removed:
            continue
        xp, yp = qdq.params(dx), qdq.params(q)
        if xp is None or yp is None or xp[0].size != 1 or yp[0].size != 1 or xp[0].reshape(()) != yp[0].reshape(()):
            continue
        if not xp[0].reshape(()) > 0:
            continue  # (a scale of 0, negative or NaN: the round trip is not the identity)
        x_type, y_type = qdq.input_type(dx, xp), qdq.output_type(yp)
        if x_type not in TYPES.values() or y_type != x_type:
            continue
        xz = xp[1].reshape(()) if xp[1] is not None else x_type.type(0)
        yz = yp[1].reshape(()) if yp[1] is not None else y_type.type(0)
        if xz != yz:
            continue
        move.input[0] = dx.input[0]
        move.output[0] = q.output[0]
        qdq.dropped(q, (dx,))
    return qdq.finish()
