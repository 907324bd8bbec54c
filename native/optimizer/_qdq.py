"""What the QDQ fusions (fuse_qdq_*.py, drop_qdq_moves.py) share.  Each finds a node whose
inputs are DequantizeLinear outputs and whose output only one QuantizeLinear reads, and
puts an operator on the quantized values in its place.  `Rewrite` holds the graph's
lookups for one pass (who writes and who reads each name) and its bookkeeping: zero points
made where a QDQ pair left them out, the nodes replaced and dropped, and at the end the
DequantizeLinear nodes and initializers nothing reads any more taken out."""

import numpy as np

from ._util import attrs, constant, drop_unread_dequantize, prune_initializers, variable_names

EIGHT = (np.dtype(np.int8), np.dtype(np.uint8))
TYPES = {2: np.dtype(np.uint8), 3: np.dtype(np.int8)}  # ONNX element type -> its 8-bit dtype


def plain(node, op_type) -> bool:
    """op_type of the default domain with no attributes but a per-tensor / per-axis axis."""
    if node is None or node.op_type != op_type or node.domain != "":
        return False
    extra = set(attrs(node)) - {"axis", "saturate"}
    return not extra and attrs(node).get("saturate", 1) == 1


def quantizes(graph) -> bool:
    """Whether the graph has a QuantizeLinear (else no QDQ pattern is in it)."""
    return any(n.op_type == "QuantizeLinear" for n in graph.nodes)


class Rewrite:
    """One QDQ pass over a graph: its lookups, taken before the pass changes anything, and
    the changes, made by finish()."""

    def __init__(self, graph):
        self.graph = graph
        self.variable = variable_names(graph)
        self.outputs = {o.name for o in graph.outputs}
        self.producer = {o: n for n in graph.nodes for o in n.output}
        self.readers = {name: [graph.nodes[i] for i in idx] for name, idx in graph.consumers().items()}
        self.replace = {}    # id(node) -> the node in its place
        self.removed = set()  # id(node) of the nodes that go
        self.count = 0       # patterns rewritten
        self.names = 0       # initializers made

    def constant(self, name: str):
        return constant(self.graph, name, self.variable)

    def quantized_by(self, node):
        """The plain QuantizeLinear that is the only reader of node's output (not a graph
        output), else None."""
        y = node.output[0]
        rs = self.readers.get(y, [])
        if y in self.outputs or len(rs) != 1 or not plain(rs[0], "QuantizeLinear") or rs[0].input[0] != y:
            return None
        return rs[0]

    def dequantized(self, name: str):
        """The plain DequantizeLinear that writes name, else None."""
        node = self.producer.get(name)
        return node if plain(node, "DequantizeLinear") else None

    def params(self, node, channels=None):
        """(scale, zero point as an array or None) of a DequantizeLinear / QuantizeLinear when
        both are constants, the scale float32 and per tensor (or, with `channels`, per axis 0
        of that many), else None."""
        s = self.constant(node.input[1])
        z = self.constant(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if s is None or s.dtype != np.float32 or (len(node.input) > 2 and node.input[2] and z is None):
            return None
        if s.size != 1:
            axis = attrs(node).get("axis", 1)
            if channels is None or s.shape != (channels,) or axis != 0:
                return None
        if z is not None and (z.shape != s.shape and not (z.size == 1 and s.size == 1)):
            return None
        return s, z

    def input_type(self, dq, params):
        """The 8-bit dtype of a DequantizeLinear's input: its zero point's, else the declared
        type's (None if neither says)."""
        if params[1] is not None:
            return params[1].dtype
        known = self.graph.type_of(dq.input[0])
        return TYPES.get(known.elem_type) if known is not None else None

    @staticmethod
    def output_type(params):
        """The dtype a QuantizeLinear of these parameters writes (uint8 without a zero point)."""
        return params[1].dtype if params[1] is not None else np.dtype(np.uint8)

    def declared_as(self, name: str, dtype) -> bool:
        """False only where name's element type is declared and is not dtype."""
        known = self.graph.type_of(name)
        return known is None or not known.elem_type or TYPES.get(known.elem_type) == dtype

    def int32_bias(self, dq, n: int, x_scale, w_scale, shapes) -> bool:
        """Whether DequantizeLinear dq dequantizes a constant int32 bias (of one of `shapes`)
        with zero point 0 and scale x_scale * w_scale (n of them, as float32): the scale of
        the integer sum, which is what QLinearConv's and QGemm's bias means."""
        b, bp = self.constant(dq.input[0]), self.params(dq, n)
        if b is None or b.dtype != np.int32 or b.shape not in shapes or bp is None:
            return False
        if bp[1] is not None and np.any(bp[1] != 0):
            return False
        want = (x_scale.reshape(()) * w_scale).astype(np.float32)
        return np.array_equal(np.broadcast_to(bp[0], (n,)), np.broadcast_to(want, (n,)))

    def initializer(self, owner, kind: str, value) -> str:
        """A new initializer named after the matched node `owner`."""
        name = f"{owner.output[0]}__qdq_{kind}_{self.names}"
        self.names += 1
        self.graph.initializers[name] = value
        return name

    def zero_point(self, node, dtype, shape, owner) -> str:
        """node's zero point input, or a new one of zeros where it has none."""
        if len(node.input) > 2 and node.input[2]:
            return node.input[2]
        return self.initializer(owner, "zero", np.zeros(shape, dtype))

    def dropped(self, q, dequantized) -> None:
        """One pattern rewritten: q goes (the node replacing the pattern writes its output),
        and so does each DequantizeLinear of `dequantized` (None skipped) only the pattern read."""
        self.removed.add(id(q))
        self.count += 1
        for d in dequantized:
            if d is not None and d.output[0] not in self.outputs and len(self.readers.get(d.output[0], [])) == 1:
                self.removed.add(id(d))

    def replaced(self, node, new, q, dequantized) -> None:
        """`new` in node's place, writing q's output; see dropped()."""
        self.replace[id(node)] = new
        self.dropped(q, dequantized)

    def finish(self, prune: bool = False) -> int:
        """Make the changes (com.microsoft imported where a new node is of it; with `prune`,
        the initializers nothing reads any more dropped) and return the rewrite count."""
        if self.count:
            graph = self.graph
            graph.nodes[:] = [self.replace.get(id(n), n) for n in graph.nodes if id(n) not in self.removed]
            drop_unread_dequantize(graph)
            if any(n.domain == "com.microsoft" for n in self.replace.values()):
                graph.opsets.setdefault("com.microsoft", 1)
            if prune:
                prune_initializers(graph)
        return self.count
