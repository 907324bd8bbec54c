"""BatchNormalization followed by Mul or Add with a per-channel (or scalar) constant
-> BatchNormalization with the constant folded into its scale and bias.

    bn(x) * m = (scale * m) * xhat + beta * m        bn(x) + a = scale * xhat + (beta + a)

Applies to inference-mode BN (one output) feeding only that Mul/Add, with constant
BN parameters."""

import numpy as np

from ._util import per_channel, prune_initializers, variable_names

LEVEL = 1
ORDER = 35


def apply(graph, context) -> int:
    variable = variable_names(graph)
    outputs = {o.name for o in graph.outputs}
    producer = {o: n for n in graph.nodes for o in n.output}
    consumers = None  # built at the first candidate (nothing has changed before it)
    removed = set()
    for node in graph.nodes:
        if node.op_type not in ("Mul", "Add") or node.domain != "" or len(node.input) != 2:
            continue
        for k in (0, 1):
            bn = producer.get(node.input[k])
            other = node.input[1 - k]
            if (bn is not None and bn.op_type == "BatchNormalization" and other in graph.initializers
                    and other not in variable):
                break
        else:
            continue
        if (bn.domain != "" or len([o for o in bn.output if o]) != 1 or len(bn.input) != 5
                or bn.output[0] in outputs or any(a.name == "training_mode" and a.i for a in bn.attribute)):
            continue
        consumers = consumers if consumers is not None else graph.consumers()
        if len(consumers.get(bn.output[0], [])) != 1:
            continue
        names = list(bn.input[1:3])
        if any(n in variable or n not in graph.initializers for n in names):
            continue
        scale, beta = graph.initializers[names[0]], graph.initializers[names[1]]
        c = graph.initializers[other]
        rank = graph.value_types[bn.output[0]].shape if bn.output[0] in graph.value_types else None
        out_rank = len(rank) if rank is not None else 4
        if (scale.ndim != 1 or beta.shape != scale.shape or c.dtype != scale.dtype
                or scale.dtype not in (np.float32, np.float64)):
            continue  # (a malformed BatchNormalization is left for its own check to refuse)
        vec = per_channel(c, scale.shape[0], out_rank)
        if vec is None:
            continue
        if node.op_type == "Mul":
            new_scale, new_beta = scale * vec, beta * vec
        else:
            new_scale, new_beta = scale, beta + vec
        base = node.output[0]
        graph.initializers[f"{base}__fused_scale"] = new_scale.astype(scale.dtype)
        graph.initializers[f"{base}__fused_bias"] = new_beta.astype(scale.dtype)
        bn.input[1], bn.input[2] = f"{base}__fused_scale", f"{base}__fused_bias"
        bn.output[0] = node.output[0]
        producer[node.output[0]] = bn
        removed.add(id(node))  # (consumers stays true by name: the fused node's output keeps its readers)
    if removed:
        graph.nodes[:] = [n for n in graph.nodes if id(n) not in removed]
        prune_initializers(graph)
    return len(removed)
