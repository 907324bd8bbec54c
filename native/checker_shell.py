"""The model onnx's checker is sent: the whole model but the bytes of its large weights.

onnx's checker and shape inference run in a child process (native/checker.py), and a
model's weights are most of its bytes: copied through the pipe, parsed by the child,
parsed and serialized again by shape inference, they took longer than the checks.
`shell(model)` answers a model the checker judges as it judges the whole one, whose
types shape inference infers as it infers the whole one's, without those bytes:

* a main-graph initializer becomes a graph input of its type and dims (where it is an
  input already, of exactly that type, it is just left out);
* a main-graph Constant node of a float type becomes RandomNormal with its dims and
  element type as attributes: the same output, type and shape, in the same place
  (it is never run).

Only plain weights are left out -- float, double, float16, int8 and uint8 tensors over
WEIGHTS_LEFT_OUT bytes held as raw data -- and only where everything the checker asks
of them is known to hold (a name of its own, one value field, dims > 0, a well-formed
Constant node) but for the length of their raw data, which `Shell.holds` checks as the
caller reads the values (where it fails, the caller sends the whole model).  Shape
inference reads the values of shapes, axes, pads and counts (integers) and of scales
(a few floats per dimension), never these.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (imported when a model is read, not with mlrt.lowlevel: see _types)
    import onnx
    from onnx import TensorProto

WEIGHTS_LEFT_OUT = 1 << 10  # bytes
SHELL_MIN = 64 << 10  # bytes left out, at least: below that, making the shell takes longer than it saves

_OTHER_VALUES = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
_CONSTANT_FIELDS = {"name", "type", "t", "doc_string"}  # all a Constant's `value` attribute may set


@functools.cache
def _types():
    """(item sizes of the weights that may be left out, the Constant types RandomNormal
    makes, the opsets onnx knows): made on first use, as importing onnx costs several
    times what importing mlrt.lowlevel does."""
    import onnx
    from onnx import TensorProto
    itemsize = {TensorProto.FLOAT: 4, TensorProto.DOUBLE: 8, TensorProto.FLOAT16: 2, TensorProto.UINT8: 1,
                TensorProto.INT8: 1}
    constant_types = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16)  # RandomNormal's
    constant_opsets = (1, onnx.defs.onnx_opset_version())  # those onnx knows (Constant's and RandomNormal's)
    return itemsize, constant_types, constant_opsets


@dataclass
class Shell:
    model: onnx.ModelProto
    initializers: dict = field(default_factory=dict)  # name -> bytes its values take
    constants: list = field(default_factory=list)     # (TensorProto of a Constant, bytes its values take)

    def holds(self, arrays: dict) -> bool:
        """Whether the raw data left out is as long as the checker asks: the initializers
        as read into `arrays` (name -> np.ndarray) take exactly their bytes, the
        Constants' raw data at least theirs."""
        for name, size in self.initializers.items():
            a = arrays.get(name)
            if a is None or a.nbytes != size:
                return False
        return all(len(t.raw_data) >= size for t, size in self.constants)


def shell(model: onnx.ModelProto, size: int | None = None) -> Shell | None:
    """The model without the bytes of its large weights (see the module's docstring);
    None where they come to less than SHELL_MIN bytes (`size`: the model's, where known)."""
    g = model.graph
    if size is not None and size < SHELL_MIN or len(g.sparse_initializer):
        return None
    initializers = _initializers_left_out(model)
    constants = _constants_left_out(model)
    left_out = sum(initializers.values()) + sum(n for _, n in constants.values())
    if not (initializers or constants) or left_out < SHELL_MIN:
        return None
    import onnx
    out = onnx.ModelProto()
    _copy_fields(model, out, skip=("graph",))
    _copy_fields(g, out.graph, skip=("initializer", "node"))
    out.graph.initializer.extend(t for t in g.initializer if t.name not in initializers)
    inputs = {vi.name for vi in g.input}
    for t in g.initializer:
        if t.name in initializers and t.name not in inputs:
            out.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    for i, node in enumerate(g.node):
        value = constants.get(i)
        if value is None:
            out.graph.node.append(node)
            continue
        value = value[0]
        stand_in = out.graph.node.add(op_type="RandomNormal", output=node.output, name=node.name)
        stand_in.attribute.add(name="shape", type=onnx.AttributeProto.INTS, ints=value.dims)
        stand_in.attribute.add(name="dtype", type=onnx.AttributeProto.INT, i=value.data_type)
    return Shell(out, initializers, list(constants.values()))


def _weight_bytes(t: TensorProto) -> int:
    """Bytes of a tensor that may be left out, else 0."""
    from onnx import TensorProto
    itemsize = _types()[0].get(t.data_type)
    if itemsize is None or not t.HasField("raw_data") or t.data_location == TensorProto.EXTERNAL:
        return 0
    size = itemsize
    for d in t.dims:
        size = size * d if d > 0 else 0
    if size <= WEIGHTS_LEFT_OUT or size >= 1 << 62 or any(len(getattr(t, f)) for f in _OTHER_VALUES):
        return 0
    return size


def _initializers_left_out(model: onnx.ModelProto) -> dict[str, int]:
    """name -> bytes of the main-graph initializers that become graph inputs.  Shape
    inference types a name that is declared as an output or value info too against
    the initializer, and an input of its name against it: those stay, but for an
    input of exactly its type (that IR < 4 asks for)."""
    g = model.graph
    counts: dict[str, int] = {}
    for t in g.initializer:
        counts[t.name] = counts.get(t.name, 0) + 1
    inputs = {vi.name: vi for vi in g.input}
    declared = {vi.name for vi in g.output} | {vi.name for vi in g.value_info}
    old_ir = model.ir_version <= 3
    out = {}
    for t in g.initializer:
        size = _weight_bytes(t)
        if not size or not t.name or counts[t.name] != 1 or t.name in declared:
            continue
        given = inputs.get(t.name)
        if (old_ir or given is not None) and not _typed_as(given, t):
            continue
        out[t.name] = size
    return out


def _typed_as(vi, t: TensorProto) -> bool:
    """Whether graph input `vi` has exactly the element type and dims of tensor `t`."""
    if vi is None or vi.type.WhichOneof("value") != "tensor_type":
        return False
    tt = vi.type.tensor_type
    if tt.elem_type != t.data_type or not tt.HasField("shape") or len(tt.shape.dim) != len(t.dims):
        return False
    return all(d.HasField("dim_value") and d.dim_value == n for d, n in zip(tt.shape.dim, t.dims))


def _constants_left_out(model: onnx.ModelProto) -> dict[int, tuple[TensorProto, int]]:
    """node index -> (value, its bytes) of the main-graph Constant nodes that become
    RandomNormal: nodes the checker passes (no input, one output; one attribute, `value`,
    a tensor and nothing else) in a model whose functions cannot stand for either op.
    The output keeps its name and place: what the checker says of names and order holds."""
    from onnx import AttributeProto
    _, constant_types, constant_opsets = _types()
    opset = next((o.version for o in model.opset_import if o.domain == ""), 0)
    if not constant_opsets[0] <= opset <= constant_opsets[1] or len(model.functions):
        return {}
    found = {}
    for i, node in enumerate(model.graph.node):
        if node.op_type != "Constant" or len(node.attribute) != 1:
            continue
        a = node.attribute[0]
        if a.type != AttributeProto.TENSOR or a.t.data_type not in constant_types:
            continue
        size = _weight_bytes(a.t)
        if not size or node.domain != "" or len(node.input) or len(node.output) != 1 or not node.output[0] \
                or a.name != "value" or not {fd.name for fd, _ in a.ListFields()} <= _CONSTANT_FIELDS:
            continue
        found[i] = (a.t, size)
    return found


def _copy_fields(src, dst, skip: tuple) -> None:
    for fd, value in src.ListFields():
        if fd.name in skip:
            continue
        if fd.is_repeated:
            getattr(dst, fd.name).extend(value)
        elif fd.type == fd.TYPE_MESSAGE:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)
