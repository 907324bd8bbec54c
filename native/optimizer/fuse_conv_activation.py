"""Conv [+ Add (or two-input Sum) of a same-shape tensor] + activation -> com.microsoft FusedConv.

The activation (Relu, LeakyRelu, Clip with constant bounds, Sigmoid, Tanh,
HardSigmoid) is applied as the Conv kernel stores its result, while it is in cache;
an Add of another tensor of the output's shape (a residual connection) is folded in
the same way.  Applies when each intermediate feeds only the next node and is not a
graph output.  Runs after the Conv+BN and Conv+Mul/Add fusions (ORDER)."""

import numpy as np
from onnx import helper

LEVEL = 2
ORDER = 50
_PLAIN = {"Relu", "Sigmoid", "Tanh"}
_WITH_PARAMS = {"LeakyRelu": ("alpha",), "HardSigmoid": ("alpha", "beta")}


def _activation(node, graph):
    """(name, params) FusedConv understands for this node, or None."""
    if node.domain != "":
        return None
    if node.op_type in _PLAIN:
        return node.op_type, []
    if node.op_type in _WITH_PARAMS:
        defaults = {"alpha": 0.01 if node.op_type == "LeakyRelu" else 0.2, "beta": 0.5}
        given = {a.name: a.f for a in node.attribute}
        return node.op_type, [given.get(k, defaults[k]) for k in _WITH_PARAMS[node.op_type]]
    if node.op_type == "Clip":
        if len(node.input) == 1:  # opset < 11: attributes
            given = {a.name: a.f for a in node.attribute}
            return "Clip", [given.get("min", -3.4028234663852886e38), given.get("max", 3.4028234663852886e38)]
        bounds = []
        for k, default in ((1, -np.inf), (2, np.inf)):
            name = node.input[k] if len(node.input) > k else ""
            if not name:
                bounds.append(default)
            elif name in graph.initializers and graph.initializers[name].size == 1:
                bounds.append(float(graph.initializers[name].reshape(())))
            else:
                return None
        return "Clip", bounds
    return None


def _single_use(name, consumers, outputs):
    return name not in outputs and len(consumers.get(name, [])) == 1


def apply(graph, context) -> int:
    outputs = {o.name for o in graph.outputs}
    fused = 0
    changed = True
    while changed:
        changed = False
        consumers = graph.consumers()
        by_index = graph.nodes
        for conv in list(graph.nodes):
            if conv.op_type != "Conv" or conv.domain != "":
                continue
            out = conv.output[0]
            if not _single_use(out, consumers, outputs):
                continue
            nxt = by_index[consumers[out][0]]
            z, tail = "", nxt
            if nxt.op_type in ("Add", "Sum") and nxt.domain == "" and len(nxt.input) == 2:
                other = nxt.input[1] if nxt.input[0] == out else nxt.input[0]
                shapes = graph.value_types
                same = (other in shapes and out in shapes and shapes[other].shape is not None
                        and shapes[other].shape == shapes[out].shape and None not in shapes[out].shape
                        and all(isinstance(d, int) for d in shapes[out].shape))
                if not same or other == out:
                    continue
                z = other
                if _single_use(nxt.output[0], consumers, outputs):
                    tail = by_index[consumers[nxt.output[0]][0]]
                else:
                    tail = None
            act = _activation(tail, graph) if tail is not None else None
            if act is None and not z:
                continue
            name, params = act if act is not None else ("", [])
            last = tail if act is not None else nxt
            inputs = list(conv.input) + [""] * (3 - len(conv.input))
            attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
            if name:
                attrs["activation"] = name
            if params:
                attrs["activation_params"] = [float(p) for p in params]
            fused_node = helper.make_node("FusedConv", inputs[:3] + ([z] if z else []), [last.output[0]],
                                          name=conv.name or f"FusedConv_{out}", domain="com.microsoft", **attrs)
            position = graph.nodes.index(conv)
            removed = {id(conv), id(nxt), id(tail) if act is not None else 0}
            graph.nodes[:] = [n for n in graph.nodes if id(n) not in removed]
            graph.nodes.insert(min(position, len(graph.nodes)), fused_node)
            fused += 1
            changed = True
            break
    if fused:
        graph.reorder()
    return fused
