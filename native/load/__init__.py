"""Reading a model into a Graph (native/graph.py): `load(source)` reads it
(read.py), refuses one over the node limit (limits.py), rewrites it as it is read
(rewrites.py), reads its external data under the guard (external.py), has onnx's
checker and shape inference look at it in a child process (native/checker.py) while
the graph is built, and expands its model-local functions."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..._errors import InvalidModel
from ..checker import check_and_infer, check_isolated
from ..checker_shell import shell
from ..graph import Graph, ValueType, from_graph_proto, value_type
from .external import load_external, memory_bytes, memory_key
from .limits import MAX_NODES, MAX_NODES_KEY, check_node_count, count_nodes, parse_max_nodes
from .read import read_model, source_files
from .rewrites import calls_local_functions, default_domain, fix_dimensions, inline_local_functions

if TYPE_CHECKING:
    import onnx

log = logging.getLogger("mlrt")

def load(source, dims: dict | None = None, prepare=None, max_nodes: int | None = MAX_NODES,
         files: dict | None = None) -> Graph:
    """Read, check and order a model from a path, bytes or ModelProto.  `dims` fixes
    free input dimensions first (see `fix_dimensions`); `prepare(graph)`, if given, runs
    on the graph while onnx's checker works (its errors are the caller's to meet later).
    A model of more than `max_nodes` nodes (subgraphs included) is refused at once.
    `files` holds external data files given in memory (see external.load_external)."""
    model, base, data = read_model(source)
    if max_nodes is not None:
        check_node_count(model, max_nodes)
    changed = default_domain(model)
    if dims and any(dims.values()):
        changed |= fix_dimensions(model, **dims)
    changed |= load_external(model, base, files)
    held = shell(model, len(data) if data is not None else None)  # all the checker needs: no large weights
    built = {}

    def build():  # while the checker works; its verdict on a bad model comes first, as it would alone
        try:
            built["graph"] = from_model(model, infer=False)
            built["held"] = held is None or held.holds(built["graph"].initializers)
        except Exception as exc:
            built["error"] = exc
            return
        if prepare is not None:
            try:
                prepare(built["graph"])
            except Exception:
                pass  # (what failed here fails again where it is needed)

    err, inferred, advice = check_isolated(model if held is None else held.model,
                                           None if changed or held is not None else data, meanwhile=build)
    if held is not None and not built.get("held"):
        # (a weight the checker did not see may be what is wrong: its word on the whole model)
        err, inferred, advice = check_isolated(model, None if changed else data)
    if err is not None:  # (mlrt's own word, where it has one, names what is wrong and where)
        raise built["error"] if isinstance(built.get("error"), InvalidModel) else InvalidModel(err)
    if "error" in built:
        raise built["error"]
    if advice is not None:
        log.warning("the model fails the ONNX checker (%s); loaded all the same, as onnxruntime loads it", advice)
    graph = built["graph"]
    if calls_local_functions(model):  # (the checker has passed the functions: now they are safe to expand)
        graph = _inlined(model, prepare)
    types = _InferredTypes(graph.value_types)
    for vi in inferred:
        dict.__setitem__(types, vi.name, vi)
    graph.value_types = types
    return graph

def _inlined(model: onnx.ModelProto, prepare) -> Graph:
    """The graph of `model` with its model-local functions expanded (inline_local_functions)."""
    graph = from_model(inline_local_functions(model), infer=False)
    if prepare is not None:
        try:
            prepare(graph)
        except Exception:
            pass  # (what failed here fails again where it is needed)
    return graph

class _InferredTypes(dict):
    """name -> ValueType, each made from shape inference's ValueInfoProto when first asked
    for: a model has hundreds (PP-OCRv4 det: 672, 4 ms to convert), a session asks for few."""

    def __getitem__(self, name):
        v = dict.__getitem__(self, name)
        if not isinstance(v, ValueType):
            v = value_type(v)
            dict.__setitem__(self, name, v)
        return v

    def get(self, name, default=None):
        return self[name] if name in self else default

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

def from_model(model: onnx.ModelProto, infer: bool = True) -> Graph:
    """A Graph from an already checked model (`infer`: run onnx shape inference here)."""
    if not model.HasField("graph"):
        raise InvalidModel("the model has no graph")
    for vi in model.graph.input:  # (a Loop or Scan body's may have none: their types are the node's)
        if vi.type.WhichOneof("value") is None:
            raise InvalidModel(f"graph input '{vi.name}' has no type")
    default_domain(model)
    opsets = {o.domain: o.version for o in model.opset_import}
    graph = from_graph_proto(model.graph, opsets, ir_version=model.ir_version)
    graph.model = model
    if infer:
        for vi in check_and_infer(model)[1]:
            graph.value_types[vi.name] = value_type(vi)
    return graph


__all__ = ["MAX_NODES", "MAX_NODES_KEY", "calls_local_functions", "check_node_count", "count_nodes", "default_domain",
           "fix_dimensions", "from_model", "inline_local_functions", "load", "load_external", "memory_bytes",
           "memory_key", "parse_max_nodes", "read_model", "source_files"]
