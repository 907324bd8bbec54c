"""DequantizeLinear -> GlobalAveragePool -> QuantizeLinear -> com.microsoft
QLinearGlobalAveragePool: in a QDQ model (a CNN's pooling before its classifier), the
average of the quantized values instead of the float one of their dequantized values, as
onnxruntime's QDQ fusion does at its extended level.

The pattern: GlobalAveragePool(DequantizeLinear(x_q)) whose output only one QuantizeLinear
reads, both scales and zero points per tensor and constant, x_q and y of one 8-bit type.
QLinearGlobalAveragePool sums exactly and requantizes in float as onnxruntime's kernel
does (kernels/ms_qlinear.c).  The DequantizeLinear goes if nothing else reads it."""

from onnx import helper

from ._qdq import TYPES, Rewrite, quantizes

LEVEL = 2
ORDER = 46


def apply(graph, context) -> int:
    if not quantizes(graph):
        return 0
    qdq = Rewrite(graph)
    for pool in graph.nodes:
        if pool.op_type != "GlobalAveragePool" or pool.domain != "":
            continue
        q, dx = qdq.quantized_by(pool), qdq.dequantized(pool.input[0])
        if q is None or dx is None:
            continue
        xp, yp = qdq.params(dx), qdq.params(q)
        if xp is None or yp is None or xp[0].size != 1 or yp[0].size != 1:
            continue
        x_type, y_type = qdq.input_type(dx, xp), qdq.output_type(yp)
        if x_type not in TYPES.values() or y_type != x_type:
            continue
        known = graph.type_of(dx.input[0])
        if known is not None and known.shape is not None and len(known.shape) < 3:
            continue
        ins = [dx.input[0], dx.input[1], qdq.zero_point(dx, x_type, (), pool),
               q.input[1], qdq.zero_point(q, y_type, (), pool)]
        node = helper.make_node("QLinearGlobalAveragePool", ins, [q.output[0]],
                                name=(pool.name or pool.output[0]) + "_qlinear", domain="com.microsoft",
                                channels_last=0)
        qdq.replaced(pool, node, q, (dx,))
    return qdq.finish()
