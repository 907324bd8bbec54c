"""What every operator file builds on.

An operator is one class in one file of this folder: its attributes with their
defaults, how output dtypes and shapes follow from the inputs (`infer`), and what
its C kernel is handed (`launch`: the parameter struct's fields and, where the
semantics call for it, strided views of the inputs).  Broadcasting, axis
normalisation and output shapes are worked out here once; kernels get resolved
shapes, strides and a named struct.

The class name is the op type, optionally with the opset version it starts at
(`Softmax_13`); the registry picks the newest version not above the model's opset.

An operator whose values may live in one another's bytes says so in `aliases`, a
tuple of `Alias`es; every planner reads it and nothing else (no list of op types):
    Alias(AliasKind.WHOLE, output=j, input=i)   output j is input i's bytes (Reshape)
    Alias(AliasKind.SLICES, input=i)            the outputs are input i's bytes cut along
                                                `alias_axis`, laid end to end (Split)
    Alias(AliasKind.GATHER, output=j)           the inputs are output j's bytes cut along
                                                `alias_axis`, laid end to end (Concat)
It says what may share; the planner decides where the bytes really line up (SLICES
and GATHER: only 1s before the axis, and its own alignment; WHOLE: the kernel reads the
input as it is, with no view).  `node_aliases()` narrows it for one node (Dropout: none
when its mask is asked for).  The CPU plan (plan/native.py) keeps such values in the
other's bytes, and the C kernel, finding them in place, moves nothing; OpenCL
(opencl/reshape.py) runs a node whose outputs are all WHOLE aliases as its input's
buffer under a new shape, with no kernel.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from ..._errors import InvalidModel

if TYPE_CHECKING:  # (onnx is imported where a model is read, not with mlrt.lowlevel)
    from onnx import AttributeProto

REQUIRED = object()  # an attribute default meaning "the model must set it"


@dataclass
class Info:
    """What the planner knows of one value: element type, shape and maybe its content.
    `strings`, for a string value a plan reads at run time: (the string input it comes
    from, the int64 numbers of its elements there) -- data movement on strings is
    planned ahead on those numbers (plan/walk.py)."""

    dtype: np.dtype
    shape: tuple[int, ...]
    value: np.ndarray | None = None
    strings: tuple | None = None

    @staticmethod
    def of(array: np.ndarray) -> "Info":
        return Info(array.dtype, tuple(array.shape), array)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(int(d) for d in self.shape)  # Python ints: a hostile shape cannot wrap


@dataclass
class View:
    """How a kernel should see a tensor: a shape and element strides over its buffer."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class Launch:
    """One kernel call: which C kernel, its parameters, optional input views, and
    `extra` constant arrays appended after the node's inputs (tables built once from
    attributes, pre-packed weights) -- the kernel sees them as more inputs."""

    kernel: str
    params: dict | None = None
    views: dict[int, View] = field(default_factory=dict)
    type_input: int = 0  # which input's dtype selects the kernel
    extra: list = field(default_factory=list)


class AliasKind(enum.Enum):
    """How values of a node share bytes (see `Alias`)."""

    WHOLE = "whole"    # output `output` is input `input`'s bytes: the same elements, the same order
    SLICES = "slices"  # the outputs are input `input`'s bytes cut along the axis, end to end
    GATHER = "gather"  # the inputs are output `output`'s bytes cut along the axis, end to end


@dataclass(frozen=True)
class Alias:
    """One declaration of `Op.aliases`: values of a node that may live in another's bytes."""

    kind: AliasKind
    output: int = 0
    input: int = 0


def contiguous_strides(shape) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= int(n)
    return tuple(reversed(strides))


def broadcast_shape(*shapes, where: str = "") -> tuple[int, ...]:
    """Numpy-style multidirectional broadcasting of shapes; InvalidModel if they clash."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(rank):
        dims = {s[len(s) - rank + d] for s in shapes if len(s) - rank + d >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise InvalidModel(f"{where}: shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_view(shape, out_shape) -> View:
    """A view of a contiguous tensor of `shape` stretched to `out_shape` (stride 0 on broadcast dims)."""
    strides = contiguous_strides(shape)
    pad = len(out_shape) - len(shape)
    full = []
    for d, n in enumerate(out_shape):
        k = d - pad
        full.append(0 if k < 0 or shape[k] == 1 and n != 1 else strides[k])
    return View(tuple(out_shape), tuple(full))


def normalize_axis(axis: int, rank: int, where: str = "") -> int:
    if not -rank <= axis < max(rank, 1):
        raise InvalidModel(f"{where}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _attribute_value(attr: AttributeProto, as_array: bool = False):
    from onnx import AttributeProto, helper, numpy_helper  # (onnx only once a model is read)
    if as_array and attr.type == AttributeProto.INTS:  # (numpy reads protobuf's list at once)
        return np.array(attr.ints, dtype=np.int64)
    if as_array and attr.type == AttributeProto.FLOATS:
        return np.array(attr.floats, dtype=np.float32)
    if attr.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(attr.t)
    if attr.type == AttributeProto.TENSORS:
        return [numpy_helper.to_array(t) for t in attr.tensors]
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if attr.type == AttributeProto.STRINGS:
        return _decoded(value)
    return value


def _decoded(values: list) -> list[str]:
    """[v.decode() for v in values], decoded at once where the list is long (tree nodes'
    modes): joined by NUL, which none of them holds, and split again."""
    if len(values) > 16:
        joined = b"\0".join(values)
        if joined.count(b"\0") == len(values) - 1:
            try:
                return joined.decode().split("\0")
            except UnicodeDecodeError:
                pass  # (each one decoded below, for the error)
    return [v.decode() for v in values]


class Runtime:
    """What a host operator's run_host() may use besides its inputs (None where there is
    none, as in constant folding): `run_subgraph(body, inputs) -> outputs` runs a body
    graph with the enclosing values visible; `run_loop` and `run_scan` iterate a Loop or
    Scan body natively (None, the default: iterate in Python); `pool` is the native
    thread pool its kernels run on (None: the library's default)."""

    pool = None

    def run_subgraph(self, body, inputs: list) -> list:
        raise NotImplementedError

    def run_loop(self, body, state: list, first_index: int, trip: int | None):
        """(state, scan chunks, iterations, still going), or None."""
        return None

    def run_scan(self, body, state: list, slices: list, length: int):
        """(state, scan outputs stacked on axis 0), or None."""
        return None


class Op:
    """Base of all operators.  Subclasses set the class attributes and override infer/launch."""

    domain = ""
    attributes: dict = {}   # name -> default (REQUIRED if the model must give it)
    array_attributes: frozenset = frozenset()  # INTS / FLOATS attributes read as int64 / float32 arrays, not lists
    params: str | None = None  # the C parameter struct, e.g. "mlrt_conv_params"
    value_inputs: tuple[int, ...] = ()  # inputs whose content infer() reads (shape tensors, axes...)
    kernel: str | None = ""  # C kernel op type: "" = the node's op type, None = no kernel needed
    tolerance = (1e-5, 1e-6)  # (rtol, atol) for float results against a reference
    host = False  # True: run_host() runs it in Python (control flow, sequences, strings)
    deterministic = True  # False (random ops): never computed ahead of time, even on constants
    made_ahead = False  # True: slow to make (tables from large attributes), made at load (ops.prepare)
    moves: tuple[int, ...] = ()  # data movement: inputs whose elements reach the outputs unchanged
    #   (string tensors there go through the int64 kernel as element numbers, plan/eager.py)
    aliases: tuple[Alias, ...] = ()  # values that may live in another's bytes (the module docstring)

    def __init__(self, node, opset: int):
        self.node = node
        self.opset = opset
        self.name = node.name or f"{node.op_type}({', '.join(node.output)})"
        self.where = f"node '{self.name}' ({node.op_type})"
        given = {a.name: a for a in node.attribute}
        values = {}
        for key, default in self.attributes.items():
            if key in given:
                try:
                    values[key] = _attribute_value(given[key], key in self.array_attributes)
                except (ValueError, TypeError, UnicodeDecodeError) as exc:  # a tensor's bytes and dims disagree, ...
                    raise InvalidModel(f"{self.where}: attribute '{key}' cannot be read: {exc}") from None
            elif default is REQUIRED:
                raise InvalidModel(f"{self.where}: required attribute '{key}' is missing")
            else:
                values[key] = default
        self.a = SimpleNamespace(**values)

    @property
    def op_type(self) -> str:
        return self.node.op_type

    # -- to override -------------------------------------------------------------
    def infer(self, inputs: list[Info | None]) -> list[Info]:
        """Output dtypes and shapes (and values, for metadata ops like Shape)."""
        raise NotImplementedError

    def pack(self, inputs: list[Info | None], outputs: list[Info]) -> dict | None:
        """Fields of the C parameter struct."""
        return None

    def launch(self, inputs: list[Info | None], outputs: list[Info]) -> Launch:
        return Launch(self.kernel or self.op_type, self.pack(inputs, outputs))

    def moved_inputs(self, count: int) -> list[int]:
        """Which of `count` given inputs are `moves` inputs (Concat: all of them)."""
        return [k for k in self.moves if k < count]

    def node_aliases(self) -> tuple[Alias, ...]:
        """The `aliases` that hold for this node (by default all of them)."""
        return self.aliases

    def alias_axis(self, rank: int) -> int:
        """The axis a SLICES or GATHER alias cuts along, in [0, rank) for the whole
        tensor's rank (by default the `axis` attribute)."""
        return normalize_axis(int(self.a.axis), rank, self.where)

    def run_host(self, values: list, runtime) -> list:
        """Outputs from input values (numpy arrays, lists for sequences, None for absent
        optionals) for host operators; `runtime` (a Runtime, or None) runs body graphs
        with the enclosing values visible.  Operators that are not `host` may also
        define this to accept non-tensor inputs (e.g. Identity on a sequence)."""
        raise NotImplementedError

    def takes(self, dtypes: list) -> bool:
        """Whether the C kernel takes inputs of these element types (None: absent).  By
        default no string tensor: an op with a run_host() runs that for them, node by
        node, and a plan meeting them runs the graph so.  An op whose kernel reads strings
        (as an mlrt_strings, include/mlrt.h) says yes to them here."""
        return not any(d is not None and np.dtype(d).kind in "OUS" for d in dtypes)

    def label_strings(self) -> list | None:
        """For a `host` op that is one only to name its first output: the strings whose
        indexes its kernel writes there (a classifier's string labels), else None.  A
        plan then runs its kernel, and where that output is only the graph's, names
        the labels after the run."""
        return None

    # -- helpers for subclasses ------------------------------------------------------
    def fail(self, message: str) -> InvalidModel:
        return InvalidModel(f"{self.where}: {message}")

    def need(self, inputs: list[Info | None], index: int) -> Info:
        if index >= len(inputs) or inputs[index] is None:
            raise self.fail(f"input {index} is required")
        return inputs[index]

    def value_of(self, inputs: list[Info | None], index: int, default=None):
        """Content of a value input (None/default when the optional input is absent)."""
        if index >= len(inputs) or inputs[index] is None:
            return default
        if inputs[index].value is None:
            raise self.fail(f"input {index} must be known before the kernel runs")
        return inputs[index].value
