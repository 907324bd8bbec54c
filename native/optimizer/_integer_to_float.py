"""What the two integer-to-float fusions share (fuse_matmul_integer_to_float.py,
fuse_conv_integer_to_float.py): the chain quantize_dynamic writes after an integer
product,

    X_q, x_scale, x_zp = DynamicQuantizeLinear(x)
    S = Mul(x_scale, w_scale)                     w_scale a float32 constant
    Y = Mul(Cast(IntegerProduct(X_q, W, x_zp, ...), to=float), S)

found from the product node, and the rewrite that puts the fused nodes in its place."""

import numpy as np
from onnx import TensorProto

from ._util import attrs, constant, prune_initializers


def only_reader(readers, outputs, name, op_types):
    """The one node (default domain, of one of `op_types`: a name or a tuple of them) reading
    name, if nothing else reads it and it is no graph output."""
    rs = readers.get(name, [])
    kinds = (op_types,) if isinstance(op_types, str) else op_types
    if name in outputs or len(rs) != 1 or rs[0].op_type not in kinds or rs[0].domain != "":
        return None
    return rs[0]


def scaled_chain(graph, node, variable, outputs, producer, readers):
    """(dq, cast, mul, scale_mul, w_scale name, its value) of the chain around the integer
    product `node` (input 0 the quantizer's output, input 2 its zero point), or None."""
    dq = producer.get(node.input[0])
    if dq is None or dq.op_type != "DynamicQuantizeLinear" or dq.domain != "" or len(dq.output) != 3:
        return None
    if len(node.input) < 3 or dq.output[0] != node.input[0] or node.input[2] != dq.output[2]:
        return None
    cast = only_reader(readers, outputs, node.output[0], "Cast")
    if cast is None or attrs(cast).get("to") != TensorProto.FLOAT:
        return None
    mul = only_reader(readers, outputs, cast.output[0], "Mul")
    if mul is None or len(mul.input) != 2:
        return None
    s = mul.input[1] if mul.input[0] == cast.output[0] else mul.input[0]
    sm = producer.get(s)
    if s == cast.output[0] or sm is None or sm.op_type != "Mul" or sm.domain != "" or dq.output[1] not in sm.input:
        return None
    w_scale = sm.input[1] if sm.input[0] == dq.output[1] else sm.input[0]
    ws = constant(graph, w_scale, variable)
    if ws is None or ws.dtype != np.float32 or w_scale == dq.output[1]:
        return None
    return dq, cast, mul, sm, w_scale, ws


def rewrite(graph, replace: dict, removed: set, scales: set, outputs) -> int:
    """Put the fused nodes (`replace`: id of the product -> its node) in place, drop the
    chain's other nodes (`removed`) and the scale products (`scales`) nothing reads any
    more; the number of fusions."""
    if not replace:
        return 0
    graph.nodes[:] = [replace.get(id(nd), nd) for nd in graph.nodes if id(nd) not in removed]
    read = graph.names_read() | outputs
    graph.nodes[:] = [nd for nd in graph.nodes if id(nd) not in scales or nd.output[0] in read]
    graph.opsets.setdefault("com.microsoft", 1)
    prune_initializers(graph)
    return len(replace)
