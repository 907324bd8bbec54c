"""The graph the pipeline works on: nodes in topological order (onnx NodeProto),
initializers as numpy arrays, the opset of each domain, and the declared types of
inputs and outputs; the names a node reads (its subgraphs included), the topological
order, and a Graph from a GraphProto.  Reading a model into one is native/load/."""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._errors import InvalidModel
from .tensor_proto import array_of, dense_of, elem_name, why_unreadable

if TYPE_CHECKING:  # onnx is imported where a model is read: importing it (with ml_dtypes)
    import onnx    # costs several times what importing the rest of mlrt.lowlevel does

DEFAULT_OPSET_FLOOR = 7

@dataclass
class ValueType:
    """Declared type of a graph input or output: ONNX element type and dims (int, str or None)."""

    name: str
    elem_type: int
    shape: tuple | None
    kind: str = "tensor"  # tensor, sequence, map, optional
    type_string: str = ""  # onnxruntime's spelling for non-tensor types, e.g. "seq(tensor(float))"


@dataclass
class Graph:
    nodes: list                      # onnx NodeProto, topologically ordered
    initializers: dict               # name -> np.ndarray
    inputs: list[ValueType]          # graph inputs that are not initializers
    overridable: list[ValueType]     # graph inputs that have an initializer
    outputs: list[ValueType]
    opsets: dict                     # domain -> version
    value_types: dict = field(default_factory=dict)  # name -> ValueType from shape inference
    model: onnx.ModelProto | None = None
    outer: list = field(default_factory=list)  # names read from enclosing graphs (subgraphs only)
    nested: dict = field(default_factory=dict, repr=False, compare=False)  # id(node) -> (node, its subgraphs)
    prepared: dict = field(default_factory=dict, repr=False, compare=False)  # id(node) -> (node, Op): ops.prepare

    def opset(self, domain: str) -> int:
        return self.opsets.get(domain, 1)

    def reads(self, node) -> list[str]:
        """`node_reads(node)`, the node's subgraphs looked up once: passes rewrite nodes'
        inputs and outputs, never their attributes, and reading the attributes of every
        node in every pass took a tenth of making a session."""
        entry = self.nested.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self.nested[id(node)] = (node, subgraphs(node))
        return node_reads(node, entry[1])

    def consumers(self) -> dict[str, list[int]]:
        """name -> indexes of nodes reading it (directly or from inside their subgraphs)."""
        out: dict[str, list[int]] = {}
        for i, node in enumerate(self.nodes):
            for name in self.reads(node):
                out.setdefault(name, []).append(i)
        return out

    def reorder(self) -> None:
        """Topological order again after a rewrite moved nodes around."""
        known = {v.name for v in self.inputs + self.overridable} | set(self.initializers) | set(self.outer)
        self.nodes = toposort(self.nodes, known, self.reads)

    def type_of(self, name: str) -> "ValueType | None":
        """The declared type of a graph input/output, else the inferred one (None if unknown)."""
        for v in self.inputs + self.overridable + self.outputs:
            if v.name == name:
                return v
        return self.value_types.get(name)

    def names_read(self) -> set[str]:
        """Every name some node reads (subgraphs included), plus the graph outputs."""
        return {n for node in self.nodes for n in self.reads(node)} | {o.name for o in self.outputs}

    def read_by_subgraphs(self) -> set[str]:
        return {n for node in self.nodes for n in self.reads(node)} - {n for node in self.nodes for n in node.input}

@functools.cache
def _tensor_types() -> frozenset:
    import onnx
    return frozenset(onnx.helper.get_all_tensor_dtypes())


def value_type(vi: onnx.ValueInfoProto) -> ValueType:
    t = vi.type
    which = t.WhichOneof("value")
    if which == "tensor_type":
        tt = t.tensor_type
        shape = None
        if tt.HasField("shape"):
            shape = tuple([d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim])
        if tt.elem_type and tt.elem_type not in _tensor_types():
            raise InvalidModel(f"value '{vi.name}' has element type {tt.elem_type}, which is no ONNX tensor type")
        return ValueType(vi.name, tt.elem_type, shape)
    kind = {"sequence_type": "sequence", "map_type": "map", "optional_type": "optional",
            "sparse_tensor_type": "sparse_tensor"}.get(which, "unknown")
    return ValueType(vi.name, 0, None, kind, _spell(t))

def _spell(t: onnx.TypeProto) -> str:
    """onnxruntime's type string: tensor(float), seq(tensor(int64)), map(string,tensor(float)), ..."""
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        name = elem_name(getattr(t, which).elem_type)
        return f"{'sparse_tensor' if which == 'sparse_tensor_type' else 'tensor'}({name})"
    if which == "sequence_type":
        return f"seq({_spell(t.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({_spell(t.optional_type.elem_type)})"
    if which == "map_type":
        key = elem_name(t.map_type.key_type)
        return f"map({key},{_spell(t.map_type.value_type)})"
    return "unknown"

# onnx.AttributeProto.UNDEFINED, GRAPH and GRAPHS: numbers fixed by the ONNX format, written
# out so that this module imports onnx only when it reads a model (tests/test_import_cost.py
# checks them against onnx's)
_MAY_HOLD_GRAPHS = (0, 5, 10)


def subgraphs(node) -> list:
    """The graphs a node's attributes hold (If branches, Loop and Scan bodies, ...).
    Only attributes typed GRAPH or GRAPHS, or untyped, are looked into: onnx's checker
    refuses a graph under any other type, and the attribute's type is quick to read."""
    found = []
    for a in node.attribute:
        if a.type in _MAY_HOLD_GRAPHS:
            found += ([a.g] if a.HasField("g") else []) + list(a.graphs)
    return found


def node_reads(node, held: list | None = None) -> list[str]:
    """Every name a node reads: its inputs, and enclosing-scope names its subgraphs read
    (`held`: its subgraphs, where the caller has them)."""
    names = [n for n in node.input if n]
    for sub in subgraphs(node) if held is None else held:
        names += [n for n in outer_references(sub) if n not in names]
    return names


def toposort(nodes, known: set[str], reads=node_reads) -> list:
    """Kahn's order; InvalidModel names the first input nothing produces, or the cycle."""
    producers = {}
    for i, n in enumerate(nodes):
        for o in n.output:
            if o:
                if o in producers or o in known:
                    raise InvalidModel(f"value '{o}' is produced twice (node '{n.name or n.op_type}')")
                producers[o] = i
    pending = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for name in set(reads(n)):
            if name in known:
                continue
            if name not in producers:
                raise InvalidModel(f"node '{n.name or n.op_type}' reads '{name}', which no node, input or initializer provides")
            pending[i] += 1
            users[producers[name]].append(i)
    ready = deque(i for i, p in enumerate(pending) if p == 0)
    order = []
    while ready:
        i = ready.popleft()
        order.append(i)
        for j in users[i]:
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    if len(order) != len(nodes):
        stuck = next(n for i, n in enumerate(nodes) if pending[i] > 0)
        raise InvalidModel(f"the graph has a cycle through node '{stuck.name or stuck.op_type}'")
    return [nodes[i] for i in order]

def outer_references(g: onnx.GraphProto) -> list[str]:
    """Names a (sub)graph reads that it does not define itself (values of enclosing graphs)."""
    defined = {v.name for v in g.input} | {t.name for t in g.initializer}
    defined |= {o for n in g.node for o in n.output}
    refs: list[str] = []
    for n in g.node:
        names = list(n.input)
        for sub in subgraphs(n):
            names += outer_references(sub)
        for name in names:
            if name and name not in defined and name not in refs:
                refs.append(name)
    return refs

def from_graph_proto(g: onnx.GraphProto, opsets: dict, outer: tuple[str, ...] = (), ir_version: int = 8) -> Graph:
    """A Graph from a GraphProto; `outer` names values of enclosing graphs it may read."""
    inits, unreadable, kinds = {}, {}, {}
    for t in g.initializer:  # (the last of a name holds, as in onnxruntime; one of no name nothing can read)
        kind = (t.data_type, tuple(t.dims))
        if kinds.setdefault(t.name, kind) != kind:
            raise InvalidModel(f"initializer '{t.name}' is given twice, of different types or dims "
                               f"({elem_name(kinds[t.name][0])} {list(kinds[t.name][1])} and "
                               f"{elem_name(kind[0])} {list(kind[1])})")
        try:
            inits[t.name] = array_of(t)
            unreadable.pop(t.name, None)
        except Exception as exc:
            unreadable[t.name] = why_unreadable(t, exc)
            inits.pop(t.name, None)
    inits.pop("", None)
    unreadable.pop("", None)
    for t in g.sparse_initializer:  # (held dense, as onnxruntime holds them)
        try:
            inits[t.values.name] = dense_of(t)
        except InvalidModel as exc:
            unreadable[t.values.name] = str(exc)
    declared = [value_type(vi) for vi in g.input]
    if len({v.name for v in declared}) < len(declared):
        twice = next(v.name for i, v in enumerate(declared) if v.name in {u.name for u in declared[:i]})
        raise InvalidModel(f"graph input '{twice}' is declared twice")
    inputs = [v for v in declared if v.name not in inits]
    # Before IR version 4 every initializer had to be listed as an input; such models
    # treat them as constants (as onnxruntime does).  From IR 4 they can be overridden.
    overridable = [v for v in declared if v.name in inits] if ir_version >= 4 else []
    known = {v.name for v in declared} | set(inits) | set(unreadable) | set(outer)
    graph = Graph([], inits, inputs, overridable, [], dict(opsets))
    graph.nodes = toposort(list(g.node), known, graph.reads)
    graph.outputs = [value_type(vi) for vi in g.output]
    if unreadable:  # (one nothing reads onnxruntime drops unread: so does mlrt)
        wanted = graph.names_read() | {v.name for v in declared}
        name = next((n for n in unreadable if n in wanted), None)
        if name is not None:
            raise InvalidModel(f"initializer '{name}' cannot be read: {unreadable[name]}")
    produced = {o for n in graph.nodes for o in n.output} | known
    bad = next((n for n in produced if not isinstance(n, str)), None)
    if bad is None:
        bad = next((t for n in graph.nodes for t in (n.name, n.op_type, n.domain) if not isinstance(t, str)), None)
    if bad is not None:  # (protobuf hands a name that is not valid UTF-8 back as bytes)
        raise InvalidModel(f"name {bad!r} is not valid UTF-8 text")
    for o in graph.outputs:
        if o.name not in produced:
            raise InvalidModel(f"graph output '{o.name}' is not produced by any node")
    if outer:  # (with none, toposort has made sure that the graph reads nothing from outside)
        graph.outer = [n for n in outer_references(g) if n not in {v.name for v in declared} and n not in inits]
    return graph


__all__ = ["Graph", "ValueType", "from_graph_proto", "node_reads", "outer_references", "subgraphs", "toposort",
           "value_type"]
