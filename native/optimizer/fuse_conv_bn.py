"""Conv + BatchNormalization -> Conv with the normalisation folded into its weights.

    y = scale * (conv(x, W) + B - mean) / sqrt(var + eps) + beta
      = conv(x, W * s) + (B - mean) * s + beta,        s = scale / sqrt(var + eps)

Applies when W, B and the BN statistics are constant initializers, the Conv output
feeds only this BN, and the BN runs in inference mode (one output)."""

import numpy as np

from ._util import constant, prune_initializers, variable_names

LEVEL = 1
ORDER = 30


def apply(graph, context) -> int:
    if not any(n.op_type == "BatchNormalization" for n in graph.nodes):
        return 0
    outputs = {o.name for o in graph.outputs}
    variable = variable_names(graph)
    consumers = None  # built at the first candidate (nothing has changed before it)
    producer = {o: n for n in graph.nodes for o in n.output}
    removed = set()
    for bn in graph.nodes:
        if bn.op_type != "BatchNormalization" or bn.domain != "":
            continue
        if len([o for o in bn.output if o]) != 1 or len(bn.input) != 5:
            continue
        if any(a.name == "training_mode" and a.i for a in bn.attribute):
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or conv.domain != "":
            continue
        if conv.output[0] in outputs:
            continue
        consumers = consumers if consumers is not None else graph.consumers()
        if len(consumers.get(conv.output[0], [])) != 1:
            continue
        w = constant(graph, conv.input[1], variable)
        b = constant(graph, conv.input[2], variable) if len(conv.input) > 2 and conv.input[2] else None
        stats = [constant(graph, n, variable) for n in bn.input[1:]]
        if w is None or any(s is None for s in stats) or w.dtype not in (np.float32, np.float64):
            continue
        if len(conv.input) > 2 and conv.input[2] and (b is None or b.shape != (w.shape[0],)):
            continue  # (a bias of another length is the Conv's error to report, not the fusion's)
        scale, beta, mean, var = (s.astype(np.float64) for s in stats)
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        if not all(s.shape == (w.shape[0],) for s in (scale, beta, mean, var)):
            continue
        s = scale / np.sqrt(var + eps)
        new_w = np.empty_like(w)  # w * s computed in float64, rounded to w's type as it is stored
        np.multiply(w, s.reshape(-1, *([1] * (w.ndim - 1))), out=new_w, dtype=np.float64, casting="same_kind")
        bias = b.astype(np.float64) if b is not None else np.zeros(w.shape[0])
        new_b = ((bias - mean) * s + beta).astype(w.dtype)
        w_name, b_name = f"{conv.output[0]}__fused_W", f"{conv.output[0]}__fused_B"
        graph.initializers[w_name] = new_w
        graph.initializers[b_name] = new_b
        del conv.input[1:]
        conv.input.extend([w_name, b_name])
        conv.output[0] = bn.output[0]
        removed.add(id(bn))
    if removed:
        graph.nodes[:] = [n for n in graph.nodes if id(n) not in removed]
        prune_initializers(graph)
    return len(removed)
