"""Conv [+ Add (or two-input Sum) of a same-shape tensor] + activation -> com.microsoft FusedConv.

The activation (Relu, LeakyRelu, Clip with constant bounds, Sigmoid, Tanh,
HardSigmoid, HardSwish, and x * Sigmoid(x), x * HardSigmoid(x) or x * Clip(x + 3, 0, 6) / 6
as exporters write SiLU and HardSwish) is applied as the Conv kernel stores its result, while it is in cache;
an Add of another tensor of the output's shape (a residual connection) is folded in
the same way.  Applies when each intermediate feeds only the next node and is not a
graph output.  Runs after the Conv+BN and Conv+Mul/Add fusions (ORDER)."""

import numpy as np
from onnx import helper

from ._util import constant

LEVEL = 2
ORDER = 50
_PLAIN = {"Relu", "Sigmoid", "Tanh"}
_WITH_PARAMS = {"LeakyRelu": ("alpha",), "HardSigmoid": ("alpha", "beta")}


def _activation(node, graph):
    """(name, params) FusedConv understands for this one-node activation, or None."""
    if node.domain != "":
        return None
    if node.op_type in _PLAIN:
        return node.op_type, []
    if node.op_type in _WITH_PARAMS:
        return node.op_type, _params(node)
    if node.op_type == "HardSwish":
        return "HardSwish", [1 / 6, 0.5]
    if node.op_type == "Clip":
        if len(node.input) == 1:  # opset < 11: attributes
            given = {a.name: a.f for a in node.attribute}
            return "Clip", [given.get("min", -3.4028234663852886e38), given.get("max", 3.4028234663852886e38)]
        bounds = []
        for k, default in ((1, -np.inf), (2, np.inf)):
            name = node.input[k] if len(node.input) > k else ""
            if not name:
                bounds.append(default)
            elif _scalar(graph, name) is not None:
                bounds.append(_scalar(graph, name))
            else:
                return None
        return "Clip", bounds
    return None


def _params(node):
    defaults = {"alpha": 0.01 if node.op_type == "LeakyRelu" else 0.2, "beta": 0.5}
    given = {a.name: a.f for a in node.attribute}
    return [given.get(k, defaults[k]) for k in _WITH_PARAMS[node.op_type]]


def _single_use(name, readers, outputs):
    return name not in outputs and len(readers.get(name, ())) == 1


def _activation_of(value, readers, outputs, graph):
    """(name, params, nodes) when the readers of `value` compute nothing but one activation
    of it: one activation node, or a gate times the value (Sigmoid(v) * v is Swish,
    HardSigmoid(v) * v HardSwish).  None otherwise."""
    if value in outputs:
        return None
    rs = readers.get(value, ())
    if len(rs) == 1:
        act = _activation(rs[0], graph)
        if act is None or rs[0].input[0] != value or value in rs[0].input[1:]:
            return None
        return act[0], act[1], [rs[0]]
    if len(rs) != 2:
        return None
    spelled_out = _hard_swish_spelled_out(value, rs, readers, outputs, graph)
    if spelled_out is not None:
        return spelled_out
    mul, gate = rs if rs[0].op_type == "Mul" else rs[::-1]
    if mul.op_type != "Mul" or mul.domain != "" or gate.domain != "" or len(gate.input) != 1:
        return None
    if sorted(mul.input) != sorted([value, gate.output[0]]) or not _single_use(gate.output[0], readers, outputs):
        return None
    if gate.op_type == "Sigmoid":
        return "Swish", [1.0], [gate, mul]
    if gate.op_type == "HardSigmoid":
        return "HardSwish", _params(gate), [gate, mul]
    return None


def _scalar(graph, name):
    value = constant(graph, name)
    return float(value.reshape(())) if value is not None and value.size == 1 else None


def _only_reader(name, readers, outputs):
    return readers[name][0] if _single_use(name, readers, outputs) else None


def _hard_swish_spelled_out(value, rs, readers, outputs, graph):
    """v * Clip(v + a, 0, b) / b (or * (1 / b)), as paddle2onnx writes HardSwish (a = 3,
    b = 6): HardSwish with alpha 1 / b and beta a / b.  None if `rs` is not that."""
    add, mul = rs if rs[0].op_type == "Add" else rs[::-1]
    if add.op_type != "Add" or mul.op_type != "Mul" or add.domain != "" or mul.domain != "":
        return None
    a = _scalar(graph, add.input[1] if add.input[0] == value else add.input[0])
    clip = _only_reader(add.output[0], readers, outputs)
    if a is None or clip is None or clip.op_type != "Clip" or clip.input[0] != add.output[0]:
        return None
    bounds = _activation(clip, graph)
    if bounds is None or bounds[1][0] != 0.0 or not bounds[1][1] > 0.0:
        return None
    b = bounds[1][1]
    if sorted(mul.input) != sorted([value, clip.output[0]]) or not _single_use(clip.output[0], readers, outputs):
        return None
    tail = _only_reader(mul.output[0], readers, outputs)
    if tail is None or tail.domain != "" or tail.input[0] != mul.output[0] or len(tail.input) != 2:
        return None
    k = _scalar(graph, tail.input[1])
    if k is None or not ((tail.op_type == "Div" and k == b) or (tail.op_type == "Mul" and abs(k * b - 1.0) < 1e-6)):
        return None
    return "HardSwish", [1.0 / b, a / b], [add, clip, mul, tail]


def apply(graph, context) -> int:
    """One pass in node order.  `readers` (name -> the nodes reading it) is kept true as
    nodes are fused, so a later Conv sees the FusedConv that took its old reader."""
    if not any(n.op_type == "Conv" for n in graph.nodes):
        return 0
    outputs = {o.name for o in graph.outputs}
    readers: dict[str, list] = {}
    for node in graph.nodes:
        for name in graph.reads(node):
            readers.setdefault(name, []).append(node)
    replaced: dict[int, object] = {}  # id(conv) -> its FusedConv
    removed: set[int] = set()         # ids of the nodes fused into one
    for conv in list(graph.nodes):
        if conv.op_type != "Conv" or conv.domain != "" or id(conv) in removed:
            continue
        out = conv.output[0]
        gone, z, last = [conv], "", out
        act = _activation_of(out, readers, outputs, graph)
        if act is None and _single_use(out, readers, outputs):
            nxt = readers[out][0]
            if nxt.op_type in ("Add", "Sum") and nxt.domain == "" and len(nxt.input) == 2:
                other = nxt.input[1] if nxt.input[0] == out else nxt.input[0]
                mine, theirs = graph.type_of(out), graph.type_of(other)
                same = (mine is not None and theirs is not None and mine.shape is not None
                        and theirs.shape == mine.shape and all(isinstance(d, int) for d in mine.shape))
                if same and other != out:
                    z, last = other, nxt.output[0]
                    gone.append(nxt)
                    act = _activation_of(last, readers, outputs, graph)
        if act is None and not z:
            continue
        name, params = "", []
        if act is not None:
            name, params, nodes = act
            gone += nodes
            last = nodes[-1].output[0]
        inputs = list(conv.input) + [""] * (3 - len(conv.input))
        attrs = {}
        if name:
            attrs["activation"] = name
        if params:
            attrs["activation_params"] = [float(p) for p in params]
        fused_node = helper.make_node("FusedConv", inputs[:3] + ([z] if z else []), [last],
                                      name=conv.name or f"FusedConv_{out}", domain="com.microsoft", **attrs)
        # Conv's attributes as they are (an empty list's type cannot be told from its value)
        fused_node.attribute.extend(a for a in conv.attribute if a.name not in attrs)
        removed.update(id(n) for n in gone)
        replaced[id(conv)] = fused_node
        for n in gone:
            for r in graph.reads(n):
                readers[r] = [x for x in readers.get(r, ()) if x is not n]
        for r in graph.reads(fused_node):
            readers.setdefault(r, []).append(fused_node)
    if replaced:
        graph.nodes[:] = [replaced.get(id(n), n) for n in graph.nodes if id(n) in replaced or id(n) not in removed]
        graph.reorder()
    return len(replaced)
