"""ConvInteger -> Cast -> Mul [-> Add] [-> Relu | Clip] -> com.microsoft ConvIntegerToFloat
(mlrt's own operator, native/ops/ms_convintegertofloat.py): the chain onnxruntime's
quantize_dynamic writes for each Conv, as one node whose integer sums become the float
outputs as they are stored.

The pattern, every intermediate read only by the next node and not a graph output:

    X_q, x_scale, x_zp = DynamicQuantizeLinear(x)
    S = Mul(x_scale, w_scale)                      w_scale a float32 constant, one or per channel
    Y = Mul(Cast(ConvInteger(X_q, W, x_zp [, w_zp]), to=float), S)
    [Y = Add(Y, bias)]                             bias a float32 constant, per channel
    [Y = Relu(Y) or Clip(Y, min, max)]             constant bounds

with W a constant 8-bit filter.  The fused node computes the same float32 operations in
the same order (the scales' product, the product, the sum, max then min), so the results
are the chain's bit for bit.  The DynamicQuantizeLinear stays (several convolutions may
read one quantized input)."""

import numpy as np
from onnx import helper

from ._integer_to_float import only_reader, rewrite, scaled_chain
from ._qdq import EIGHT
from ._util import constant, lookups, per_channel
from .fuse_conv_activation import _activation

LEVEL = 2
ORDER = 41
_CONV_ATTRIBUTES = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def apply(graph, context) -> int:
    if not any(n.op_type == "ConvInteger" for n in graph.nodes):
        return 0
    variable, outputs, producer, readers = lookups(graph)
    replace, removed, scales = {}, set(), set()
    for conv in graph.nodes:
        if conv.op_type != "ConvInteger" or conv.domain != "" or not 3 <= len(conv.input) <= 4:
            continue
        xq, w = conv.input[0], conv.input[1]
        x_zp = conv.input[2]
        w_zp = conv.input[3] if len(conv.input) > 3 else ""
        chain = scaled_chain(graph, conv, variable, outputs, producer, readers)
        wv = constant(graph, w, variable)
        if chain is None or wv is None or wv.ndim < 3 or wv.dtype not in EIGHT:
            continue
        dq, cast, mul, sm, w_scale, ws = chain
        m, rank = wv.shape[0], wv.ndim
        ws_vector = ws.reshape(1) if ws.size == 1 else per_channel(ws, m, rank)
        if ws_vector is None:
            continue
        if w_zp:
            wz = constant(graph, w_zp, variable)
            if wz is None or wz.dtype != wv.dtype or not (wz.size == 1 or wz.size == m):
                continue
        gone, out, bias, act = [cast, mul], mul.output[0], "", None
        add = only_reader(readers, outputs, out, "Add")
        if add is not None and len(add.input) == 2:
            other = add.input[1] if add.input[0] == out else add.input[0]
            b = constant(graph, other, variable) if other != out else None
            vector = per_channel(b, m, rank) if b is not None and b.dtype == np.float32 else None
            if vector is not None:
                bias = f"{add.output[0]}__bias"
                graph.initializers[bias] = np.ascontiguousarray(vector, np.float32)
                out = add.output[0]
                gone.append(add)
        nxt = only_reader(readers, outputs, out, ("Relu", "Clip"))
        if nxt is not None:
            act = _activation(nxt, graph)
            if act is not None:
                out = nxt.output[0]
                gone.append(nxt)
        if ws_vector.shape != ws.shape:
            w_scale = f"{conv.output[0]}__w_scale"
            graph.initializers[w_scale] = np.ascontiguousarray(ws_vector, np.float32)
        ins = [xq, w, dq.output[1], w_scale, x_zp, w_zp, bias]
        while ins[-1] == "":
            ins.pop()
        kept = {a.name: helper.get_attribute_value(a) for a in conv.attribute if a.name in _CONV_ATTRIBUTES}
        kept["kernel_shape"] = list(wv.shape[2:])  # (always written: the portable form reads the rank from it)
        extra = {"activation": act[0], "activation_params": [float(v) for v in act[1]]} if act and act[1] else \
            {"activation": act[0]} if act else {}
        node = helper.make_node("ConvIntegerToFloat", ins, [out], domain="com.microsoft",
                                name=(conv.name or conv.output[0]) + "_to_float", **kept, **extra)
        replace[id(conv)] = node
        removed.update(id(g) for g in gone)
        scales.add(id(sm))
    return rewrite(graph, replace, removed, scales, outputs)
