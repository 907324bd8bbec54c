"""Conv followed by Mul or Add with a per-channel (or scalar) constant -> Conv.

    conv(x, W, B) * m = conv(x, W * m, B * m)      conv(x, W, B) + a = conv(x, W, B + a)

Applies when the Conv output feeds only that Mul/Add, the other operand is a
constant whose shape broadcasts along the output channels only ((C,1,..,1) or a
single element), and the weights are constant."""

import numpy as np

from ._util import per_channel, prune_initializers, variable_names

LEVEL = 1
ORDER = 40


def apply(graph, context) -> int:
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    consumers = None  # built at the first candidate (nothing has changed before it)
    producer = {o: n for n in graph.nodes for o in n.output}
    removed = set()
    for node in graph.nodes:
        if node.op_type not in ("Mul", "Add") or node.domain != "" or len(node.input) != 2:
            continue
        for k in (0, 1):
            conv = producer.get(node.input[k])
            other = node.input[1 - k]
            if conv is not None and conv.op_type == "Conv" and other in graph.initializers and other not in variable:
                break
        else:
            continue
        if conv.output[0] in outputs or conv.domain != "":
            continue
        consumers = consumers if consumers is not None else graph.consumers()
        if len(consumers.get(conv.output[0], [])) != 1:
            continue
        w_name = conv.input[1]
        b_name = conv.input[2] if len(conv.input) > 2 else ""
        if w_name in variable or w_name not in graph.initializers or (b_name and (b_name in variable or b_name not in graph.initializers)):
            continue
        w = graph.initializers[w_name]
        c = graph.initializers[other]
        if c.dtype != w.dtype or w.dtype not in (np.float32, np.float64):
            continue
        vec = per_channel(c, w.shape[0], w.ndim)
        if vec is None:
            continue
        b = graph.initializers[b_name] if b_name else np.zeros(w.shape[0], w.dtype)
        if node.op_type == "Mul":
            new_w = w * vec.reshape(-1, *([1] * (w.ndim - 1)))
            new_b = b * vec
        else:
            new_w, new_b = w, b + vec
        base = node.output[0]
        graph.initializers[f"{base}__fused_W"] = new_w.astype(w.dtype, copy=False)  # (w itself after an Add)
        graph.initializers[f"{base}__fused_B"] = new_b.astype(w.dtype)
        del conv.input[1:]
        conv.input.extend([f"{base}__fused_W", f"{base}__fused_B"])
        conv.output[0] = node.output[0]
        producer[node.output[0]] = conv
        removed.add(id(node))  # (consumers stays true by name: the fused node's output keeps its readers)
    if removed:
        graph.nodes[:] = [n for n in graph.nodes if id(n) not in removed]
        prune_initializers(graph)
    return len(removed)
