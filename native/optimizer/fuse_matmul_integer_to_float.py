"""MatMulInteger -> Cast -> Mul [-> Add] -> com.microsoft MatMulIntegerToFloat: the chain
onnxruntime's quantize_dynamic writes for each MatMul of a transformer, as one node, as
onnxruntime's extended level fuses it.

The pattern, every intermediate read only by the next node and not a graph output:

    A_q, a_scale, a_zp = DynamicQuantizeLinear(x)
    S = Mul(a_scale, b_scale)                     b_scale a float32 constant, one or N
    Y = Mul(Cast(MatMulInteger(A_q, B, a_zp [, b_zp]), to=float), S)
    [Y = Add(Y, bias)]                            bias a float32 constant of N

with B a constant 8-bit matrix of N columns and b_zp a constant of b_scale's shape.  The
fused node computes float32(acc) * float32(a_scale * b_scale) [+ bias], the same float32
operations in the same order as the chain (ops/ms_matmulintegertofloat.py), so the
results are bit for bit the chain's; its constant B is packed once for the integer
product.  The DynamicQuantizeLinear stays (it may feed several products: a transformer's
query, key and value)."""

import numpy as np
from onnx import helper

from ._integer_to_float import only_reader, rewrite, scaled_chain
from ._qdq import EIGHT
from ._util import constant, lookups

LEVEL = 2
ORDER = 40


def apply(graph, context) -> int:
    if not any(n.op_type == "MatMulInteger" for n in graph.nodes):
        return 0
    variable, outputs, producer, readers = lookups(graph)
    replace, removed, scales = {}, set(), set()
    for mm in graph.nodes:
        if mm.op_type != "MatMulInteger" or mm.domain != "" or not 2 <= len(mm.input) <= 4:
            continue
        a, b = mm.input[0], mm.input[1]
        a_zp = mm.input[2] if len(mm.input) > 2 else ""
        b_zp = mm.input[3] if len(mm.input) > 3 else ""
        chain = scaled_chain(graph, mm, variable, outputs, producer, readers)
        bv = constant(graph, b, variable)
        if chain is None or bv is None or bv.ndim != 2 or bv.dtype not in EIGHT:
            continue
        dq, cast, mul, sm, b_scale, bs = chain
        n = bv.shape[1]
        if bs.ndim > 2 or not (bs.size == 1 or bs.shape == (n,)):
            continue
        if b_zp:
            bz = constant(graph, b_zp, variable)
            if bz is None or bz.dtype != bv.dtype or not (bz.shape == bs.shape or bz.size == bs.size == 1):
                continue
        ins = [a, b, dq.output[1], b_scale, a_zp, b_zp]
        out, gone = mul.output[0], [cast, mul]
        add = only_reader(readers, outputs, out, "Add")
        if add is not None and len(add.input) == 2:
            other = add.input[1] if add.input[0] == out else add.input[0]
            bias = constant(graph, other, variable) if other != out else None
            if bias is not None and bias.dtype == np.float32 and bias.ndim <= 2 and bias.shape[-1:] == (n,) \
                    and bias.size == n:  # ((1, N) at most: the sum's rank is Y's)
                if bias.shape != (n,):
                    other = f"{add.output[0]}__bias"
                    graph.initializers[other] = bias.reshape(n)
                ins.append(other)
                out = add.output[0]
                gone.append(add)
        node = helper.make_node("MatMulIntegerToFloat", ins, [out], domain="com.microsoft",
                                name=(mm.name or mm.output[0]) + "_to_float")
        replace[id(mm)] = node
        removed.update(id(g) for g in gone)
        scales.add(id(sm))
    return rewrite(graph, replace, removed, scales, outputs)
