"""GELU as exporters spell it -> one Gelu node (approximate "none").

    x * 0.5 * (1 + Erf(x / sqrt 2))

with x / sqrt 2 written as Div by 1.4142... or Mul by 0.7071..., the 0.5 applied last
((x * a) * 0.5), first ((x * 0.5) * a) or to the sum (x * (a * 0.5)), and the operands of
every Mul and Add in either order.  The constants must be scalar constant initializers
of the right values (within 1e-6 relative); every intermediate must feed only the next
node and not be a graph output.  The Gelu node is in the default domain: mlrt runs it at
any opset (ops/gelu.py has no version), not only from 20."""

import math

from onnx import helper

from ._util import constant, lookups

LEVEL = 2
ORDER = 60
_SQRT2 = math.sqrt(2.0)


def _is(value, want) -> bool:
    return value is not None and value.size == 1 and abs(float(value.reshape(())) - want) <= 1e-6 * abs(want)


def apply(graph, context) -> int:
    """One pass over the Erf nodes.  `readers` (name -> the nodes reading it) is kept true
    as chains are fused, so a chain fed by an earlier Gelu sees the new node."""
    if not any(n.op_type == "Erf" for n in graph.nodes):
        return 0
    variable, outputs, producer, readers = lookups(graph)

    def const(name):
        return constant(graph, name, variable)

    def only_reader(name, op_type, arity=2):
        """The one plain `op_type` node of `arity` inputs reading `name`, once, when `name`
        is no graph output; else None."""
        rs = readers.get(name, ())
        if name in outputs or len(rs) != 1 or rs[0].op_type != op_type or rs[0].domain != "":
            return None
        return rs[0] if len(rs[0].input) == arity and list(rs[0].input).count(name) == 1 else None

    def other(node, name):
        return node.input[1] if node.input[0] == name else node.input[0]

    def match(erf):
        """(x, nodes of the chain in order) if `erf` is the middle of a GELU, else None."""
        scaled = producer.get(erf.input[0]) if len(erf.input) == 1 else None
        if scaled is None or only_reader(erf.input[0], "Erf", 1) is not erf or len(scaled.input) != 2:
            return None
        if scaled.op_type == "Div" and scaled.domain == "" and _is(const(scaled.input[1]), _SQRT2):
            x = scaled.input[0]
        elif scaled.op_type == "Mul" and scaled.domain == "":
            k = 1 if _is(const(scaled.input[1]), 1 / _SQRT2) else 0 if _is(const(scaled.input[0]), 1 / _SQRT2) else None
            if k is None:
                return None
            x = scaled.input[1 - k]
        else:
            return None
        add = only_reader(erf.output[0], "Add")
        if add is None or not _is(const(other(add, erf.output[0])), 1.0):
            return None
        mul = only_reader(add.output[0], "Mul")
        if mul is None:
            return None
        b = other(mul, add.output[0])
        if b == x:                                   # (x * a) * 0.5
            last = only_reader(mul.output[0], "Mul")
            if last is None or not _is(const(other(last, mul.output[0])), 0.5):
                return None
            return x, [scaled, erf, add, mul, last]
        if _is(const(b), 0.5):                       # x * (a * 0.5)
            last = only_reader(mul.output[0], "Mul")
            if last is None or other(last, mul.output[0]) != x:
                return None
            return x, [scaled, erf, add, mul, last]
        half = producer.get(b)                       # (x * 0.5) * a
        if (half is None or half.op_type != "Mul" or half.domain != "" or len(half.input) != 2
                or only_reader(b, "Mul") is not mul or x not in half.input or not _is(const(other(half, x)), 0.5)):
            return None
        return x, [scaled, half, erf, add, mul]

    removed: set[int] = set()
    replaced: dict[int, object] = {}  # id(last node of a chain) -> its Gelu
    for erf in list(graph.nodes):
        if erf.op_type != "Erf" or erf.domain != "" or id(erf) in removed:
            continue
        found = match(erf)
        if found is None or any(id(n) in removed for n in found[1]):
            continue
        x, chain = found
        y = chain[-1].output[0]  # every match ends at the Mul that gives the result
        gelu = helper.make_node("Gelu", [x], [y], name=erf.name or f"Gelu_{y}")
        removed.update(id(n) for n in chain)
        for n in chain:
            for r in graph.reads(n):
                readers[r] = [m for m in readers.get(r, ()) if m is not n]
        readers.setdefault(x, []).append(gelu)
        replaced[id(chain[-1])] = gelu
    if replaced:
        graph.nodes[:] = [replaced.get(id(n), n) for n in graph.nodes if id(n) in replaced or id(n) not in removed]
        graph.reorder()
    return len(replaced)
