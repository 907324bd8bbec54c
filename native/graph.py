"""Loading and validating a model into the graph the pipeline works on.

The graph is plain Python over onnx's protobuf classes: nodes in topological order,
initializers as numpy arrays, the opset of each domain, and the declared types of
inputs and outputs.  onnx parses the bytes (never by hand); external data is read
only from inside the model's own folder.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InvalidArgument, InvalidModel, NoSuchFile
from .checker import check_and_infer, check_isolated
from .checker_shell import shell

if TYPE_CHECKING:  # onnx is imported where a model is read: importing it (with ml_dtypes)
    import onnx    # costs several times what importing the rest of mlrt.lowlevel does

DEFAULT_OPSET_FLOOR = 7

log = logging.getLogger("mlrt")


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
        self.nodes = _toposort(self.nodes, known, self.reads)

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


def _elem_name(elem: int) -> str:
    import onnx
    if not elem:
        return "undefined"
    try:
        return onnx.helper.tensor_dtype_to_string(elem).replace("TensorProto.", "").lower()
    except (KeyError, ValueError):
        raise InvalidModel(f"element type {elem} is not an ONNX type") from None


def _spell(t: onnx.TypeProto) -> str:
    """onnxruntime's type string: tensor(float), seq(tensor(int64)), map(string,tensor(float)), ..."""
    which = t.WhichOneof("value")
    if which in ("tensor_type", "sparse_tensor_type"):
        name = _elem_name(getattr(t, which).elem_type)
        return f"{'sparse_tensor' if which == 'sparse_tensor_type' else 'tensor'}({name})"
    if which == "sequence_type":
        return f"seq({_spell(t.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({_spell(t.optional_type.elem_type)})"
    if which == "map_type":
        key = _elem_name(t.map_type.key_type)
        return f"map({key},{_spell(t.map_type.value_type)})"
    return "unknown"


def _read_model(source) -> tuple[onnx.ModelProto, Path | None, bytes | None]:
    """The model, the folder its external data may lie in, and the bytes it was read
    from (None for a ModelProto)."""
    import onnx
    if isinstance(source, onnx.ModelProto):
        copy = onnx.ModelProto()
        copy.CopyFrom(source)
        return copy, None, None
    if isinstance(source, (bytes, bytearray, memoryview)):
        try:
            data = bytes(source)
            return onnx.load_model_from_string(data), None, data
        except Exception as exc:  # protobuf raises DecodeError and friends
            raise InvalidModel(f"model bytes ({len(source)} bytes) are not an ONNX model: {exc}") from None
    path = Path(os.fspath(source))
    if not path.exists():
        raise NoSuchFile(f"model file {path} does not exist")
    if not path.is_file():
        raise InvalidModel(f"model path {path} is {'a directory' if path.is_dir() else 'not a regular file'}, "
                           "not a model file")
    try:  # as onnx.load_model reads a path (its format from its extension), keeping the bytes
        form = onnx.serialization.registry.get_format_from_file_extension(path.suffix) or "protobuf"
        data = path.read_bytes()
        return (onnx.load_model_from_string(data, format=form), path.parent.resolve(),
                data if form == "protobuf" else None)
    except Exception as exc:
        raise InvalidModel(f"{path} is not an ONNX model: {exc}") from None


def _load_external(model: onnx.ModelProto, base: Path | None, files: dict | None = None) -> bool:
    """Read the tensors the model keeps in external files into it; True if there were any.

    `files` (SessionOptions.add_external_initializers_from_files_in_memory: memory_key(name)
    -> (buffer, length)) holds files' contents in memory; when there are any, every
    location must be one of them, as onnxruntime asks, and none is read from disk.
    Otherwise each location must name a regular file inside the model's folder once every
    symlink is resolved (no absolute path, no "..", no link leading out).  Either way the
    offset and length must lie inside the file and give exactly the tensor's bytes: all
    checked before a byte is read.  InvalidModel naming the tensor and the file otherwise."""
    import onnx
    from onnx import external_data_helper
    if not _any_external(model.graph.initializer, model.graph.node) \
            and not any(_any_external((), f.node) for f in model.functions):
        return False
    tensors = [t for t in external_data_helper._get_all_tensors(model)
               if external_data_helper.uses_external_data(t)]
    if not tensors:
        return False
    views: dict = {}  # memory_key (and (memory_key, "head")) -> the bytes of a file given in memory
    try:
        for t in tensors:
            if files:
                t.raw_data = _read_in_memory(t, files, views)
            else:
                target, offset, length = _external_span(t, base)
                try:
                    with open(target, "rb") as f:
                        f.seek(offset)
                        t.raw_data = f.read(length)
                except OSError as exc:
                    raise InvalidModel(f"initializer '{t.name}': cannot read external data {target}: {exc}") from None
            del t.external_data[:]
            t.data_location = onnx.TensorProto.DEFAULT
    finally:
        for view in reversed(views.values()):
            view.release()
    return True


def memory_key(name: str) -> str:
    """A file name given in memory, or an external data location, as they are matched:
    leading "./" dropped (so "./w.bin" is "w.bin"), nothing else changed, as onnxruntime
    matches them."""
    return re.sub(r"^(?:\./+)+", "", name)


def _entries(t: onnx.TensorProto) -> tuple[str, int, int | None]:
    """Location, offset and length (None: to the end) of tensor t's external data."""
    entries = {e.key: e.value for e in t.external_data}
    location = entries.get("location", "")
    try:
        offset = int(entries.get("offset") or 0)
        length = int(entries["length"]) if entries.get("length") not in (None, "") else None
    except ValueError as exc:
        raise InvalidModel(f"initializer '{t.name}': external data '{location}' is not usable: {exc}") from None
    return location, offset, length


def _read_in_memory(t: onnx.TensorProto, files: dict, views: dict) -> bytes:
    """Tensor t's bytes from the file given in memory that its location names (see
    _load_external); `views` keeps each file's bytes for the next tensors."""
    location, offset, length = _entries(t)
    key = memory_key(location)
    if key not in files:
        raise InvalidModel(f"initializer '{t.name}': its external data file '{location}' is not among the files given "
                           f"in memory ({', '.join(repr(n) for n in files)}); when some are given, every file the "
                           "model names must be (SessionOptions.add_external_initializers_from_files_in_memory)")
    if key not in views:
        buffer, size = files[key]
        whole = views[key] = memory_bytes(buffer)  # (released by the caller, with the view of its first `size`)
        if whole.nbytes < size:
            raise InvalidArgument(f"the buffer given in memory for file '{key}' now holds {whole.nbytes} bytes, "
                                  f"fewer than the {size} its length says")
        views[key, "head"] = whole[:size]
    view = views[key, "head"]
    offset, length = _check_span(t, f"file '{location}' given in memory", offset, length, view.nbytes)
    return view[offset:offset + length].tobytes()


def memory_bytes(buffer) -> memoryview:
    """The bytes of an object with the buffer protocol, in C order, as a flat view (no
    copy where they lie in C order; a copy in that order where they do not)."""
    view = memoryview(buffer)
    if view.c_contiguous:
        return view.cast("B")
    data = view.tobytes()
    view.release()
    return memoryview(data)


def _external_span(t: onnx.TensorProto, base: Path | None) -> tuple[Path, int, int]:
    """The file, offset and length of tensor t's external data, checked (see above)."""
    location, offset, length = _entries(t)
    where = f"initializer '{t.name}': external data"
    if base is None:
        raise InvalidModel(f"{where} file '{location}' cannot be read: the model was given as bytes, so there is no "
                           "folder to find it in; load the model from its path, or give the file's contents with "
                           "SessionOptions.add_external_initializers_from_files_in_memory")
    try:
        target = (base / location).resolve()
    except (ValueError, OSError, RuntimeError) as exc:
        raise InvalidModel(f"{where} '{location}' is not usable: {exc}") from None
    if not location or base not in target.parents:
        raise InvalidModel(f"{where} '{location}' lies outside the model folder {base}")
    if not target.exists():
        raise NoSuchFile(f"{where} file {target} is missing (the model names '{location}', beside it)")
    if not target.is_file():
        raise InvalidModel(f"{where} file {target} is missing or not a regular file")
    offset, length = _check_span(t, f"file {target}", offset, length, target.stat().st_size)
    return target, offset, length


def _check_span(t: onnx.TensorProto, file: str, offset: int, length: int | None, size: int) -> tuple[int, int]:
    """Offset and length of tensor t's bytes in `file` of `size` bytes: inside it and
    exactly the tensor's size (InvalidModel otherwise); a length of None runs to the end."""
    import onnx
    where = f"initializer '{t.name}': external data"
    if offset < 0 or (length is not None and length < 0):
        raise InvalidModel(f"{where} in {file}: negative offset {offset} or length {length}")
    if length is None:
        length = max(size - offset, 0)
    if offset + length > size:
        raise InvalidModel(f"{where}: offset {offset} + length {length} runs past the end of {file} ({size} bytes)")
    need = _tensor_nbytes(t)
    if need is not None and length != need:
        raise InvalidModel(f"{where} has {length} bytes at offset {offset} of {file}; its "
                           f"{list(t.dims)} {onnx.TensorProto.DataType.Name(t.data_type).lower()} tensor needs {need}")
    return offset, length


def source_files(source) -> list[str]:
    """The files on disk a model given as `source` is read from: a path's model file and
    the external data files its tensors name (beside it); none for bytes or a ModelProto."""
    if not isinstance(source, (str, os.PathLike)):
        return []
    import onnx
    from onnx import external_data_helper
    path = Path(os.fspath(source))
    try:
        model = onnx.load_model(str(path), load_external_data=False)
    except Exception:  # (it loaded once; whatever it is now, it is no data file of ours)
        return [str(path)]
    found = {str(path)}
    for t in external_data_helper._get_all_tensors(model):
        location = next((e.value for e in t.external_data if e.key == "location"), "")
        if external_data_helper.uses_external_data(t) and location and "\0" not in location:
            found.add(str(path.parent / location))
    return sorted(found)


def _tensor_nbytes(t: onnx.TensorProto) -> int | None:
    """Bytes of t's raw data (sub-byte types packed), None where that is not fixed."""
    import onnx
    count = 1
    for d in t.dims:
        count *= int(d)
    bits = {onnx.TensorProto.INT4: 4, onnx.TensorProto.UINT4: 4, onnx.TensorProto.INT2: 2,
            onnx.TensorProto.UINT2: 2}.get(t.data_type)
    if getattr(onnx.TensorProto, "FLOAT4E2M1", None) == t.data_type:
        bits = 4
    if bits:
        return (count * bits + 7) // 8
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type))
    except (KeyError, ValueError, TypeError):
        return None
    return None if dtype.kind in "OUS" else count * dtype.itemsize


def _any_external(initializers, nodes) -> bool:
    """Whether a tensor onnx's external-data helper visits (these initializers, the
    tensors in these nodes' attributes, and the same in their subgraphs) is stored
    externally: one quick walk, where the helper's generators took milliseconds."""
    import onnx
    external = onnx.TensorProto.EXTERNAL
    if any(t.data_location == external for t in initializers):
        return True
    for node in nodes:
        for a in node.attribute:
            if a.HasField("t") and a.t.data_location == external or any(t.data_location == external for t in a.tensors):
                return True
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                if _any_external(sub.initializer, sub.node):
                    return True
    return False


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


def _toposort(nodes, known: set[str], reads=node_reads) -> list:
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


MAX_NODES = 10_000_000  # nodes in a model, subgraphs included (session.max_node_count)
MAX_NODES_KEY = "session.max_node_count"


def parse_max_nodes(config: dict) -> int:
    """The node-count limit from a session's config entries: `session.max_node_count`, an
    integer > 0 (MAX_NODES when not set)."""
    text = config.get(MAX_NODES_KEY)
    if text is None:
        return MAX_NODES
    try:
        value = int(str(text).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise InvalidArgument(f"session config entry '{MAX_NODES_KEY}' must be an integer > 0, got {text!r}")
    return value


def count_nodes(g: onnx.GraphProto) -> int:
    """The nodes of a graph and of all its subgraphs, at any depth (no recursion)."""
    count, stack = 0, [g]
    while stack:
        graph = stack.pop()
        count += len(graph.node)
        for n in graph.node:
            stack += subgraphs(n)
    return count


def check_node_count(model: onnx.ModelProto, limit: int) -> None:
    """InvalidModel when the model has more than `limit` nodes, subgraphs included."""
    n = count_nodes(model.graph)
    if n > limit:
        raise InvalidModel(f"the model has {n:,} nodes (subgraphs included), over the limit of {limit:,} "
                           f"(session config entry '{MAX_NODES_KEY}')")


def load(source, dims: dict | None = None, prepare=None, max_nodes: int | None = MAX_NODES,
         files: dict | None = None) -> Graph:
    """Read, check and order a model from a path, bytes or ModelProto.  `dims` fixes
    free input dimensions first (see `fix_dimensions`); `prepare(graph)`, if given, runs
    on the graph while onnx's checker works (its errors are the caller's to meet later).
    A model of more than `max_nodes` nodes (subgraphs included) is refused at once.
    `files` holds external data files given in memory (see _load_external)."""
    model, base, data = _read_model(source)
    if max_nodes is not None:
        check_node_count(model, max_nodes)
    changed = default_domain(model)
    if dims and any(dims.values()):
        changed |= fix_dimensions(model, **dims)
    changed |= _load_external(model, base, files)
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


def calls_local_functions(model: onnx.ModelProto) -> bool:
    """Whether a node (in the graph or a subgraph) calls one of the model's own functions."""
    if not len(model.functions):
        return False
    local = {(f.domain, f.name) for f in model.functions}

    def calls(g) -> bool:
        for node in g.node:
            if (node.domain, node.op_type) in local:
                return True
            for a in node.attribute:
                if any(calls(sub) for sub in list(a.graphs) + ([a.g] if a.HasField("g") else [])):
                    return True
        return False

    return calls(model.graph)


def _inlined(model: onnx.ModelProto, prepare) -> Graph:
    """The graph of `model` with its model-local functions expanded in place (the way
    exporters such as torch.onnx.export(dynamo=True) write modules), as onnxruntime runs them."""
    import onnx.inliner
    try:
        expanded = onnx.inliner.inline_local_functions(model)
    except Exception as exc:
        raise InvalidModel(f"the model's local functions cannot be expanded: {str(exc).strip().splitlines()[0]}") \
            from None
    graph = from_model(expanded, infer=False)
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


def default_domain(model: onnx.ModelProto) -> bool:
    """Spell the default domain one way, "", in the opset imports and every node
    (subgraphs included): ONNX allows "ai.onnx" too (onnxruntime takes both, onnx's
    checker only ""), and nothing past loading has to know.  And import the domains
    nodes use that the model does not (`_import_used_domains`).  True if it changed
    the model."""
    imports = {}
    for o in model.opset_import:
        domain = "" if o.domain == "ai.onnx" else o.domain
        imports[domain] = max(imports.get(domain, 0), o.version)
    changed = len(imports) != len(model.opset_import) or any(o.domain == "ai.onnx" for o in model.opset_import)
    if changed:
        import onnx
        del model.opset_import[:]
        model.opset_import.extend(onnx.helper.make_opsetid(d, v) for d, v in imports.items())

    used = set()  # the domains of the graph's nodes

    def respell(nodes) -> bool:
        found = False
        for n in nodes:
            if n.domain == "ai.onnx":
                n.domain = ""
                found = True
            used.add(n.domain)
            for sub in subgraphs(n):
                found |= respell(sub.node)
        return found

    changed |= respell(model.graph.node)
    for f in model.functions:
        for n in f.node:
            if n.domain == "ai.onnx":
                n.domain = ""
                changed = True
    return _import_used_domains(model, used) or changed


@functools.cache
def _newest_opsets() -> dict:
    """domain -> the newest opset version onnx or mlrt's operators know of it."""
    import onnx

    from .ops import registry
    newest = {"": onnx.defs.onnx_opset_version(), "ai.onnx.ml": onnx.defs.onnx_ml_opset_version()}
    for s in onnx.defs.get_all_schemas_with_history():
        newest[s.domain] = max(newest.get(s.domain, 0), s.since_version)
    for (domain, _), versions in registry().items():
        newest.setdefault(domain, max(since for since, _ in versions))
    return newest


def _import_used_domains(model: onnx.ModelProto, used: set) -> bool:
    """Import each operator domain nodes use (`used`) but the model does not import, at
    the newest version known (a session's custom operators: version 1), as onnxruntime
    does: onnx's checker refuses such a model, onnxruntime runs it.  An import no node
    uses whose version is out of range (onnx takes 32 bits) is dropped.  A model that
    imports nothing is left to be refused, and a domain nobody knows stays unimported
    (the checker names it).  True if it changed the model."""
    if not len(model.opset_import):
        return False
    changed = False
    for o in list(model.opset_import):
        if o.domain not in used and not -(1 << 31) <= o.version < 1 << 31:
            model.opset_import.remove(o)
            changed = True
    missing = used - {o.domain for o in model.opset_import}
    if not missing:
        return changed
    import onnx

    from .ops import _custom
    known = dict(_newest_opsets())
    known.update({domain: 1 for domain, _ in (_custom.get() or {}) if domain not in known})
    for domain in sorted(missing & set(known)):
        model.opset_import.append(onnx.helper.make_opsetid(domain, known[domain]))
        log.warning("nodes of domain '%s' run at its opset %d: the model does not import that domain "
                    "(onnxruntime takes its newest version too)", domain or "ai.onnx", known[domain])
        changed = True
    return changed


def fix_dimensions(model: onnx.ModelProto, by_name: dict | None = None, by_denotation: dict | None = None) -> bool:
    """Give free dimensions of the model's inputs a size: those named in `by_name`
    (their dim_param, wherever it appears in the graph's declared types) and those
    whose denotation is in `by_denotation` (e.g. DATA_BATCH).  A fixed dimension stays
    as it is.  True if it changed the model."""
    by_name, by_denotation = dict(by_name or {}), dict(by_denotation or {})
    g = model.graph
    initializers = {t.name for t in g.initializer}
    changed = False
    for vi in g.input:
        if vi.name in initializers or not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        for dim in vi.type.tensor_type.shape.dim:
            if dim.HasField("dim_value"):
                continue
            size = by_denotation.get(dim.denotation) if dim.denotation else None
            if size is not None:
                if dim.dim_param and dim.dim_param not in by_name:
                    by_name[dim.dim_param] = size  # the same name elsewhere in the graph follows
                dim.dim_value = size
                changed = True
    if not by_name:
        return changed
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for dim in vi.type.tensor_type.shape.dim:
                if dim.HasField("dim_param") and dim.dim_param in by_name:
                    dim.dim_value = by_name[dim.dim_param]
                    changed = True
    return changed


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


@functools.cache
def _raw_types() -> dict:
    from onnx import TensorProto
    return {TensorProto.FLOAT: "<f4", TensorProto.DOUBLE: "<f8", TensorProto.INT64: "<i8", TensorProto.INT32: "<i4",
            TensorProto.FLOAT16: "<f2", TensorProto.UINT8: "u1", TensorProto.INT8: "i1"}


def _array_of(t: onnx.TensorProto) -> np.ndarray:
    """An initializer's values: the common case (raw little-endian bytes of a plain numeric
    type, in the model) read straight from the parsed message; the rest by onnx."""
    from onnx import TensorProto, numpy_helper
    dtype = _raw_types().get(t.data_type)
    if dtype is None or t.data_location == TensorProto.EXTERNAL or not t.HasField("raw_data"):
        return numpy_helper.to_array(t)
    raw = t.raw_data
    count = 1
    for d in t.dims:
        count *= d
    if count * np.dtype(dtype).itemsize != len(raw):
        return numpy_helper.to_array(t)  # (onnx says what is wrong with it)
    return np.frombuffer(raw, dtype).astype(np.dtype(dtype).newbyteorder("="), copy=True).reshape(tuple(t.dims))


_SPARSE_DENSE_LIMIT = 1 << 32  # bytes a sparse initializer's dense form may take


def _dense_of(t: onnx.SparseTensorProto) -> np.ndarray:
    """A sparse initializer's dense array: its values at its indices (linear, [NNZ], or
    one row of coordinates per value, [NNZ, rank]) in a tensor of its dims, zeros elsewhere."""
    from onnx import numpy_helper
    name = t.values.name
    try:
        values, indices = _array_of(t.values), numpy_helper.to_array(t.indices)
    except Exception as exc:
        raise InvalidModel(f"sparse initializer '{name}' cannot be read ({exc})") from None
    dims = tuple(int(d) for d in t.dims)
    if any(d < 0 for d in dims) or values.ndim != 1 or indices.dtype.kind not in "iu":
        raise InvalidModel(f"sparse initializer '{name}': dims {list(dims)}, values of shape {list(values.shape)} "
                           f"and indices of {indices.dtype} are not a sparse tensor (ONNX wants [NNZ] values and "
                           "int64 indices)")
    count = int(np.prod(dims, dtype=np.float64))
    if count * values.dtype.itemsize > _SPARSE_DENSE_LIMIT:
        raise InvalidModel(f"sparse initializer '{name}': its dense form {list(dims)} would take more than "
                           f"{_SPARSE_DENSE_LIMIT >> 30} GiB")
    nnz = values.shape[0]
    if indices.shape == (nnz,):
        flat = indices.astype(np.int64)
    elif indices.shape == (nnz, len(dims)):
        if nnz and ((indices < 0) | (indices >= np.array(dims))).any():
            raise InvalidModel(f"sparse initializer '{name}': an index is outside its dims {list(dims)}")
        flat = np.ravel_multi_index(indices.T, dims).astype(np.int64) if nnz else np.zeros(0, np.int64)
    else:
        raise InvalidModel(f"sparse initializer '{name}': indices of shape {list(indices.shape)} for {nnz} values "
                           f"(ONNX wants [{nnz}] or [{nnz}, {len(dims)}])")
    if nnz and (flat.min() < 0 or flat.max() >= count):
        raise InvalidModel(f"sparse initializer '{name}': an index is outside its dims {list(dims)}")
    dense = np.full(count, "", object) if values.dtype == object else np.zeros(count, values.dtype)
    dense[flat] = values
    return dense.reshape(dims)


def _unreadable(t: onnx.TensorProto, exc: Exception) -> str:
    """Why initializer t cannot be read, in its own terms where they say more than onnx's."""
    import onnx
    try:
        kind = f"its {list(t.dims)} {_elem_name(t.data_type)} tensor"
        need = _tensor_nbytes(t) if t.data_type else None
    except InvalidModel:  # (an element type ONNX does not have)
        return str(exc)
    if t.HasField("raw_data") and need is not None and len(t.raw_data) != need:
        return f"its raw data has {len(t.raw_data)} bytes, where {kind} needs {need}"
    try:
        field = onnx.helper.tensor_dtype_to_field(t.data_type)
    except Exception:
        return str(exc)
    held = [fd.name for fd, _ in t.ListFields() if fd.name.endswith("_data") and fd.name != field]
    if held and not len(getattr(t, field)):
        return f"its values are in {held[0]}, where {kind} keeps them in {field}"
    return str(exc)


def from_graph_proto(g: onnx.GraphProto, opsets: dict, outer: tuple[str, ...] = (), ir_version: int = 8) -> Graph:
    """A Graph from a GraphProto; `outer` names values of enclosing graphs it may read."""
    inits, unreadable, kinds = {}, {}, {}
    for t in g.initializer:  # (the last of a name holds, as in onnxruntime; one of no name nothing can read)
        kind = (t.data_type, tuple(t.dims))
        if kinds.setdefault(t.name, kind) != kind:
            raise InvalidModel(f"initializer '{t.name}' is given twice, of different types or dims "
                               f"({_elem_name(kinds[t.name][0])} {list(kinds[t.name][1])} and "
                               f"{_elem_name(kind[0])} {list(kind[1])})")
        try:
            inits[t.name] = _array_of(t)
            unreadable.pop(t.name, None)
        except Exception as exc:
            unreadable[t.name] = _unreadable(t, exc)
            inits.pop(t.name, None)
    inits.pop("", None)
    unreadable.pop("", None)
    for t in g.sparse_initializer:  # (held dense, as onnxruntime holds them)
        try:
            inits[t.values.name] = _dense_of(t)
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
    graph.nodes = _toposort(list(g.node), known, graph.reads)
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
    if outer:  # (with none, _toposort has made sure that the graph reads nothing from outside)
        graph.outer = [n for n in outer_references(g) if n not in {v.name for v in declared} and n not in inits]
    return graph
