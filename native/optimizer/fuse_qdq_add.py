"""DequantizeLinear -> Add -> QuantizeLinear -> com.microsoft QLinearAdd: in a QDQ model,
the quantized addition instead of the float one of dequantized values (a residual
connection), as onnxruntime's QDQ fusion does at its extended level.

The pattern: Add(DequantizeLinear(a_q), DequantizeLinear(b_q)) whose output only one
QuantizeLinear reads, every scale and zero point per tensor and constant, a, b and the
result of one 8-bit type.  QLinearAdd computes in float as onnxruntime's does
(kernels/ms_qlinear.c), which can differ by a unit from the float graph's rounding.
The DequantizeLinear nodes nothing else reads go."""

from onnx import helper

from ._qdq import TYPES, Rewrite, quantizes

LEVEL = 2
ORDER = 45


def apply(graph, context) -> int:
    if not quantizes(graph):
        return 0
    qdq = Rewrite(graph)
    for add in graph.nodes:
        if add.op_type != "Add" or add.domain != "" or len(add.input) != 2:
            continue
        q, da, db = qdq.quantized_by(add), qdq.dequantized(add.input[0]), qdq.dequantized(add.input[1])
        if q is None or da is None or db is None or da is db:
            continue
        params = [qdq.params(n) for n in (da, db, q)]
        if any(p is None for p in params):
            continue
        types = [qdq.input_type(da, params[0]), qdq.input_type(db, params[1]), qdq.output_type(params[2])]
        if any(t not in TYPES.values() for t in types) or len(set(types)) != 1:
            continue
        ins = []
        for n, t in zip((da, db, q), types):
            ins += ([n.input[0]] if n is not q else []) + [n.input[1], qdq.zero_point(n, t, (), add)]
        node = helper.make_node("QLinearAdd", ins, [q.output[0]], name=(add.name or add.output[0]) + "_qlinear",
                                domain="com.microsoft")
        qdq.replaced(add, node, q, (da, db))
    return qdq.finish()
