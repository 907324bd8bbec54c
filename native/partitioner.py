"""Placing a graph's nodes on execution providers, and running the pieces.

Providers are asked in the user's order; a node goes to the first that claims it,
and the CPU provider, last, claims the rest.  Shape computations (Shape/Size and the
small integer nodes computed only from them and constants, which feed Reshape-like
shape inputs) stay on the CPU whatever claims them.  Nodes are then ordered so each
provider's nodes sit together and cut into pieces -- maximal runs on one provider --
each compiled by its provider.  Where a value crosses from one provider's memory to
another's a memcpy is made (MemcpyFromHost / MemcpyToHost, reported on the device
provider, as onnxruntime does); shape-like inputs a device node reads as values
(Reshape's shape) stay on the host, and a CPU Shape node reading a device tensor
needs only its shape, so neither copies anything.

A piece whose provider fails (its programs do not build, the device runs out of
resources or reports an error) is compiled for the CPU instead and run there, with
a warning: never a crash, never a partial answer.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .._errors import DeviceError, NotImplemented
from . import profile, providers, terminate
from .graph import Graph, ValueType

log = logging.getLogger("mlrt")

_SHAPE_SOURCES = {("", "Shape"), ("", "Size")}
DISABLE_CPU_FALLBACK = "session.disable_cpu_ep_fallback"


@dataclass
class Piece:
    provider: object
    nodes: list                      # indexes into graph.nodes, in run order
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    host_inputs: set = field(default_factory=set)    # read as values (shape inputs): stay on the host
    shape_only: set = field(default_factory=set)     # read only by Shape/Size: a stand-in suffices
    graph: Graph | None = None
    runnable: object = None
    fell_back: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def on_host(self) -> bool:
        return self.provider.on_host


def shape_nodes(graph: Graph) -> set[int]:
    """Nodes that belong on the host: Shape/Size and what is computed only from them and
    constants, and every node whose results are read only as values -- the shape,
    pads or axes inputs of other nodes (`Op.value_inputs`) -- directly or through such
    nodes.  A device would only have to send their small results back."""
    made_by_shape: set[str] = set()
    found: set[int] = set()
    for i, node in enumerate(graph.nodes):
        reads = graph.reads(node)
        if (node.domain, node.op_type) in _SHAPE_SOURCES:
            found.add(i)
        elif reads and any(n in made_by_shape for n in reads) and \
                all(n in made_by_shape or n in graph.initializers for n in reads):
            found.add(i)
        else:
            continue
        made_by_shape.update(o for o in node.output if o)
    # backwards: a node all of whose read outputs go to value inputs or to host nodes
    uses: dict[str, list] = {}
    for i, node in enumerate(graph.nodes):
        value_inputs = _value_inputs(node, graph)
        for k, name in enumerate(node.input):
            if name:
                uses.setdefault(name, []).append((i, k in value_inputs))
        for name in set(graph.reads(node)) - set(node.input):
            uses.setdefault(name, []).append((i, False))
    graph_outputs = {o.name for o in graph.outputs}
    for i in range(len(graph.nodes) - 1, -1, -1):
        outs = [o for o in graph.nodes[i].output if o]
        read = [u for o in outs for u in uses.get(o, [])]
        if read and not any(o in graph_outputs for o in outs) and all(as_value or j in found for j, as_value in read):
            found.add(i)
    return found


def assign(graph: Graph, providers: list) -> tuple[list, set[int]]:
    """Provider of every node (by index), and the shape nodes kept on the CPU."""
    owner = [None] * len(graph.nodes)
    for p in providers:
        for group in p.get_capability(graph):
            for i in group:
                if owner[i] is None:
                    owner[i] = p
    cpu = next((p for p in providers if p.on_host), None)
    kept = shape_nodes(graph) if cpu is not None else set()
    for i in kept:
        if owner[i] is not None and owner[i] is not cpu and cpu.supports(graph.nodes[i], graph):
            owner[i] = cpu
    missing = [graph.nodes[i] for i, p in enumerate(owner) if p is None]
    if missing:
        n = missing[0]
        dom = n.domain or "ai.onnx"
        raise NotImplemented(
            f"node '{n.name or n.op_type}': operator {dom}::{n.op_type} (opset {graph.opset(n.domain)}) "
            f"is not supported by any provider asked for ({', '.join(p.name for p in providers)})"
            + (f"; {len(missing) - 1} more unsupported node(s)" if len(missing) > 1 else ""))
    return owner, kept


def _clustered_order(graph: Graph, owner: list) -> list[int]:
    """A topological order that stays on one provider as long as it can."""
    producer = {o: i for i, n in enumerate(graph.nodes) for o in n.output if o}
    deps = [set() for _ in graph.nodes]
    users = [[] for _ in graph.nodes]
    for i, n in enumerate(graph.nodes):
        for name in graph.reads(n):
            j = producer.get(name)
            if j is not None and j != i and j not in deps[i]:
                deps[i].add(j)
                users[j].append(i)
    pending = [len(d) for d in deps]
    ready = [i for i, c in enumerate(pending) if c == 0]
    order, current = [], None
    while ready:
        same = [i for i in ready if owner[i] is current]
        pick = min(same) if same else min(ready)
        ready.remove(pick)
        current = owner[pick]
        order.append(pick)
        for u in users[pick]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    return order


class Placement:
    """The placed graph: pieces in run order, the node assignment, the memcpys."""

    def __init__(self, graph: Graph, providers: list, config: dict | None = None):
        self.graph = graph
        self.providers = providers
        self.cpu = next((p for p in providers if p.on_host), providers[-1])
        owner, kept = assign(graph, providers)
        self.kept = kept
        self.no_fallback = str((config or {}).get(DISABLE_CPU_FALLBACK, "0")).strip() in ("1", "true", "True")
        self._check_fallback(owner, kept)
        order = _clustered_order(graph, owner)
        self.pieces: list[Piece] = []
        for i in order:
            if self.pieces and self.pieces[-1].provider is owner[i]:
                self.pieces[-1].nodes.append(i)
            else:
                self.pieces.append(Piece(owner[i], [i]))
        for piece in self.pieces:
            self._compile(piece)
        self._wire()
        self._summarize()

    # -- building ----------------------------------------------------------------------------
    def _check_fallback(self, owner, kept) -> None:
        if not self.no_fallback:
            return
        if all(p.on_host for p in self.providers):
            return
        on_cpu = [self.graph.nodes[i] for i, p in enumerate(owner) if p is self.cpu and i not in kept]
        if on_cpu:
            kinds = Counter(n.op_type for n in on_cpu)
            raise NotImplemented(
                f"{len(on_cpu)} node(s) would fall back to {self.cpu.name} "
                f"({', '.join(f'{k} x{v}' for k, v in sorted(kinds.items()))}; first: "
                f"'{on_cpu[0].name or on_cpu[0].op_type}'), and {DISABLE_CPU_FALLBACK} is set")

    def _subgraph(self, piece: Piece) -> Graph:
        g = self.graph
        nodes = [g.nodes[i] for i in piece.nodes]
        made = {o for n in nodes for o in n.output if o}
        reads: list[str] = []
        for n in nodes:
            for name in g.reads(n):
                if name not in made and name not in reads:
                    reads.append(name)
        later = set()
        position = {id(p): k for k, p in enumerate(self.pieces)}
        for other in self.pieces[position[id(piece)] + 1:]:
            for i in other.nodes:
                later.update(g.reads(g.nodes[i]))
        later |= {o.name for o in g.outputs}
        overridable = {v.name for v in g.overridable}

        def vtype(name):
            return g.type_of(name) or ValueType(name, 0, None)

        piece.inputs = [n for n in reads if n not in g.initializers or n in overridable]
        piece.outputs = [o for n in nodes for o in n.output if o and o in later]
        inits = {n: g.initializers[n] for n in reads if n in g.initializers}
        return Graph(nodes, inits, [vtype(n) for n in piece.inputs if n not in overridable],
                     [vtype(n) for n in piece.inputs if n in overridable], [vtype(n) for n in piece.outputs],
                     g.opsets, g.value_types, g.model, [])

    def _compile(self, piece: Piece) -> None:
        if len(self.pieces) == 1:
            piece.graph = self.graph
            piece.inputs = [v.name for v in self.graph.inputs + self.graph.overridable]
            piece.outputs = [v.name for v in self.graph.outputs]
        else:
            piece.graph = self._subgraph(piece)
        try:
            piece.runnable = piece.provider.compile(piece.graph)
        except DeviceError as exc:
            if piece.on_host:
                raise
            self._fall_back(piece, exc)

    def _fall_back(self, piece: Piece, reason) -> None:
        if self.no_fallback:  # a device that fails is not quietly replaced by the CPU either
            raise DeviceError(f"{piece.provider.name}: a partition of {len(piece.nodes)} node(s) cannot run "
                              f"({reason}), and fallback to the CPU is off ({DISABLE_CPU_FALLBACK}, "
                              f"or the session's disable_fallback())")
        warnings.warn(f"{piece.provider.name}: a partition of {len(piece.nodes)} node(s) falls back to "
                      f"{self.cpu.name}: {reason}", RuntimeWarning, stacklevel=4)
        log.warning("%s: partition of %d node(s) falls back to %s: %s", piece.provider.name, len(piece.nodes),
                    self.cpu.name, reason)
        piece.runnable = self.cpu.compile(piece.graph)
        piece.provider = self.cpu
        piece.fell_back = True

    def _wire(self) -> None:
        """Which inputs each piece wants where, and the memcpys that makes."""
        g = self.graph
        made_by = {}
        for piece in self.pieces:
            for i in piece.nodes:
                for o in g.nodes[i].output:
                    made_by[o] = piece
        self.memcpys = []
        for piece in self.pieces:
            nodes = [g.nodes[i] for i in piece.nodes]
            value_reads, other_reads = set(), set()
            for n in nodes:
                cls_value_inputs = _value_inputs(n, g)
                for k, name in enumerate(n.input):
                    if name:
                        (value_reads if k in cls_value_inputs else other_reads).add(name)
                other_reads.update(set(g.reads(n)) - set(n.input))
            shape_readers = {name for n in nodes if (n.domain, n.op_type) in _SHAPE_SOURCES for name in n.input}
            piece.host_inputs = value_reads - other_reads
            piece.shape_only = {n for n in piece.inputs if n in shape_readers and n not in
                                {x for m in nodes if (m.domain, m.op_type) not in _SHAPE_SOURCES
                                 for x in g.reads(m)}}
            for name in piece.inputs:
                src = made_by.get(name)
                src_on_host = src is None or src.on_host
                if piece.on_host and not src_on_host and name not in piece.shape_only:
                    self.memcpys.append((f"MemcpyToHost_{name}", "MemcpyToHost", src.provider.name))
                elif not piece.on_host and src_on_host and name not in piece.host_inputs:
                    self.memcpys.append((f"MemcpyFromHost_{name}", "MemcpyFromHost", piece.provider.name))
        last_reader: dict[str, int] = {}
        for k, piece in enumerate(self.pieces):
            for name in piece.inputs:
                last_reader[name] = k
        outputs = {o.name for o in g.outputs}
        self._drop_after = [[] for _ in self.pieces]  # values no later piece reads (graph outputs kept)
        for name, k in last_reader.items():
            if name not in outputs:
                self._drop_after[k].append(name)
        # one host piece: run() hands it host arrays straight (no moves, no per-piece bookkeeping)
        self._sole = self.pieces[0] if len(self.pieces) == 1 and self.pieces[0].on_host else None
        self._assign()

    def _assign(self) -> None:
        where = {i: piece.provider.name for piece in self.pieces for i in piece.nodes}
        self.assignment = [(self._name(i), n.op_type, where[i]) for i, n in enumerate(self.graph.nodes)]
        self.assignment += self.memcpys

    def _summarize(self) -> None:
        total = len(self.graph.nodes)
        asked = [p for p in self.providers if not p.on_host]
        if not asked:
            return
        on_cpu = Counter(op for _, op, prov in self.assignment[:total] if prov == self.cpu.name)
        n_cpu = sum(on_cpu.values())
        message = (f"{total - n_cpu} of {total} nodes on {', '.join(p.name for p in asked)}; {n_cpu} on "
                   f"{self.cpu.name}" + (f" ({', '.join(f'{k} x{v}' for k, v in sorted(on_cpu.items()))})"
                                          if n_cpu else "") + f"; {len(self.memcpys)} memcpy node(s)")
        fell_back = sum(1 for i, (_, _, prov) in enumerate(self.assignment[:total])
                        if prov == self.cpu.name and i not in self.kept)  # shape work belongs on the CPU
        log.log(logging.WARNING if fell_back and any(p.wants_device for p in asked)
                else logging.INFO, message)
        self.summary = message

    # -- running ------------------------------------------------------------------------------------
    def quick_run(self, feeds: dict, output_names):
        """For a graph that is one host piece whose provider has them: a run with the least
        Python around it for feeds of exactly this signature (native/plan/native.py
        QuickRun: run(feeds) -> outputs in `output_names` order, or None), else None."""
        sole = self._sole
        if sole is None or not set(feeds) <= set(sole.inputs):
            return None
        return sole.provider.quick_run(sole.runnable, feeds, output_names)

    def run(self, feeds: dict, keep_on_device=()) -> dict:
        g = self.graph
        sole = self._sole
        if sole is not None and profile.active() is None:
            args, arrays = {}, True
            for name in sole.inputs:
                if name in feeds:  # (a feed may be None: an empty optional)
                    v = args[name] = feeds[name]
                    arrays = arrays and type(v) is np.ndarray
            if arrays:
                results = sole.runnable.run(args)
                out = {}
                for o in g.outputs:
                    v = results[o.name] if o.name in results else feeds.get(o.name, g.initializers.get(o.name))
                    out[o.name] = v.copy() if o.name in feeds and isinstance(v, np.ndarray) else v
                return out
        values = dict(feeds)
        owner_of: dict[str, Piece] = {}
        for k, piece in enumerate(self.pieces):
            terminate.check()
            args = {}
            for name in piece.inputs:
                if name in values:  # else an optional input left out, or an initializer not overridden
                    args[name] = (values[name], owner_of.get(name))
            if profile.active() is None:
                results = self._run_piece(piece, args)
            else:
                with profile.provider(piece.provider.name):
                    results = self._run_piece(piece, args)
            for name, v in results.items():
                values[name] = v
                owner_of[name] = piece
            for name in self._drop_after[k]:
                if name not in feeds:
                    values.pop(name, None)
        out = {}
        for o in g.outputs:
            v = values[o.name] if o.name in values else g.initializers.get(o.name)
            if o.name not in keep_on_device:
                v = _to_host(v, owner_of.get(o.name))
            if o.name in feeds and isinstance(v, np.ndarray):
                v = v.copy()  # a graph output that is a graph input: the caller's array is not handed back
            out[o.name] = v
        return out

    def _move(self, value, src: Piece | None, piece: Piece, name: str):
        if piece.on_host or name in piece.host_inputs:
            if name in piece.shape_only and not _is_host(value):
                return np.broadcast_to(np.zeros((), value.dtype), value.shape)
            if not piece.on_host or _is_host(value) or profile.active() is None:
                return _to_host(value, src)
            start = time.monotonic_ns()
            moved = _to_host(value, src)
            profile.active().node(f"MemcpyToHost_{name}", "MemcpyToHost", start, time.monotonic_ns(), [value], [moved],
                                  src.provider.name if src is not None else "")
            return moved
        if _is_host(value) and isinstance(value, np.ndarray):
            start = time.monotonic_ns()
            moved = piece.provider.to_device(value)
            if profile.active() is not None:
                profile.active().node(f"MemcpyFromHost_{name}", "MemcpyFromHost", start, time.monotonic_ns(), [value],
                                      [moved], piece.provider.name)
            return moved
        return value

    def _run_piece(self, piece: Piece, args: dict) -> dict:
        if piece.on_host:
            return piece.runnable.run({n: self._move(v, src, piece, n) for n, (v, src) in args.items()})
        try:
            return piece.runnable.run({n: self._move(v, src, piece, n) for n, (v, src) in args.items()})
        except DeviceError as exc:
            with piece._lock:
                if not piece.on_host:
                    self._fall_back(piece, exc)
                    self._wire()
            return piece.runnable.run({n: _to_host(v, src) for n, (v, src) in args.items()})

    def _name(self, i: int) -> str:
        n = self.graph.nodes[i]
        return n.name or f"{n.op_type}_{i}"


def _is_host(value) -> bool:
    return value is None or isinstance(value, (np.ndarray, list, tuple, dict, np.generic))


def _to_host(value, src: Piece | None):
    if _is_host(value):
        return value
    owner = src.provider if src is not None else providers.owner_of(value)  # (src None: a feed)
    return owner.to_host(value) if owner is not None else value


def _value_inputs(node, graph: Graph) -> tuple:
    from .ops import lookup
    cls = lookup(node.domain, node.op_type, graph.opset(node.domain))
    return tuple(cls.value_inputs) if cls is not None else ()
