"""LoRA adapters as onnxruntime has them: LoraAdapter, AdapterFormat and their file.

An adapter file (onnxruntime's adapter format: a FlatBuffers buffer with the file
identifier "TORT") holds named tensors, the parameters, with the adapter's and the
model's version numbers.  A run given `RunOptions.add_active_adapter(adapter)` feeds
each parameter as the model input of that name: a graph input or an overridable
initializer (one also listed as a graph input), typically the A and B matrices of a
LoRA pair.  As in onnxruntime, a parameter takes precedence over the value the feed
gives for the same name, the adapter added first wins where two give one name, a
name the model has no input of is an error, and an adapter never loaded adds nothing.

The file is read and written with the `flatbuffers` package, imported when an adapter
is first loaded or exported.  The fields below are those of onnxruntime's schema
(onnxruntime/lora/adapter_format/adapter_schema.fbs):

    table Parameter { name: string; dims: [int64]; data_type: TensorDataType (int32);
                      raw_data: [uint8] (aligned to 8) }
    table Adapter   { format_version: int; adapter_version: int; model_version: int;
                      parameters: [Parameter] }

TensorDataType numbers the element types as ONNX's TensorProto does; raw_data holds
the elements in little-endian order.
"""

from __future__ import annotations

import operator
import os
import struct

import numpy as np

from .._errors import InvalidArgument, InvalidModel, NoSuchFile
from ._ortvalue import OrtValue

FORMAT_VERSION = 1  # the only version onnxruntime 1.32 writes and reads
IDENTIFIER = b"TORT"

# the element types onnxruntime 1.32 loads as parameters (TensorProto numbers -> what numpy
# holds them as; bfloat16 and the float8 types are ml_dtypes types, as onnx maps them)
_FLOAT, _UINT8, _INT8, _UINT16, _INT16, _INT32, _INT64 = 1, 2, 3, 4, 5, 6, 7
_FLOAT16, _DOUBLE, _UINT32, _UINT64, _BFLOAT16 = 10, 11, 12, 13, 16
_FLOAT8E4M3FN, _FLOAT8E4M3FNUZ, _FLOAT8E5M2, _FLOAT8E5M2FNUZ = 17, 18, 19, 20
SUPPORTED_TYPES = (_FLOAT, _UINT8, _INT8, _UINT16, _INT16, _INT32, _INT64, _FLOAT16, _DOUBLE, _UINT32, _UINT64,
                   _BFLOAT16, _FLOAT8E4M3FN, _FLOAT8E4M3FNUZ, _FLOAT8E5M2, _FLOAT8E5M2FNUZ)

# vtable slots of the schema's fields, in declaration order
_A_FORMAT_VERSION, _A_ADAPTER_VERSION, _A_MODEL_VERSION, _A_PARAMETERS = range(4)
_P_NAME, _P_DIMS, _P_DATA_TYPE, _P_RAW_DATA = range(4)
_RAW_DATA_ALIGNMENT = 8


def _path(file_path, where: str) -> str:
    if not isinstance(file_path, (str, os.PathLike)):
        raise InvalidArgument(f"{where}: the path must be a str or os.PathLike, got {type(file_path).__name__}")
    return os.fspath(file_path)


def _version(value, what: str) -> int:
    """An int32, as the file stores it."""
    if isinstance(value, bool):
        raise InvalidArgument(f"{what} must be an int, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise InvalidArgument(f"{what} must be an int, got {value!r}") from None
    if not -2**31 <= value < 2**31:
        raise InvalidArgument(f"{what} must fit in 32 bits (the adapter file's int), got {value}")
    return value


def _element_type(dtype: np.dtype) -> int | None:
    from onnx import helper
    try:
        return helper.np_dtype_to_tensor_dtype(dtype)
    except (KeyError, TypeError, ValueError):
        return None


def _numpy_type(data_type: int) -> np.dtype:
    from onnx import helper
    return np.dtype(helper.tensor_dtype_to_np_dtype(data_type))


def _type_name(data_type: int) -> str:
    from onnx import helper
    try:
        return helper.tensor_dtype_to_string(data_type).replace("TensorProto.", "").lower()
    except (KeyError, ValueError):
        return f"element type {data_type}"


def _supported_names() -> str:
    return ", ".join(_type_name(t) for t in SUPPORTED_TYPES)


def _parameter(name, value, where: str) -> np.ndarray:
    """A parameter to export: a host array of a type onnxruntime loads, rank 1 or more."""
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"{where}: parameter names must be non-empty strings, got {name!r}")
    if isinstance(value, OrtValue):
        value = value.numpy()  # (one on a device is read back)
    if not isinstance(value, np.ndarray):
        raise InvalidArgument(f"{where}: parameter '{name}' must be an OrtValue or a numpy array, "
                              f"got {type(value).__name__}")
    if not value.dtype.isnative:
        value = value.astype(value.dtype.newbyteorder("="))
    data_type = _element_type(value.dtype) if value.dtype.kind not in "OUS" else None
    if data_type not in SUPPORTED_TYPES:
        raise InvalidArgument(f"{where}: parameter '{name}' is {value.dtype}; adapter parameters are tensors of "
                              f"{_supported_names()}")
    if value.ndim == 0:
        raise InvalidArgument(f"{where}: parameter '{name}' is a scalar (shape []); adapter parameters have at "
                              "least one dimension (reshape it to [1])")
    return value


class _Damaged(Exception):
    """The buffer is not a well-formed adapter: says what is wrong (the file is added by the caller)."""


class _Table:
    """A table of the buffer, read through flatbuffers.table.Table with every position
    checked against the buffer first (Python's flatbuffers has no verifier: an offset out
    of range would otherwise read from the wrong end or return a short slice)."""

    def __init__(self, buf: bytes, pos: int, what: str):
        from flatbuffers import number_types as N
        from flatbuffers.table import Table
        self.what, self._n, self._size = what, N, len(buf)
        self._need(pos, 4, "its position")
        self.table = Table(buf, pos)
        vtable = pos - self.table.Get(N.SOffsetTFlags, pos)
        self._need(vtable, 4, "its vtable")
        self._need(vtable, self.table.Get(N.VOffsetTFlags, vtable), "its vtable")
        self._need(pos, self.table.Get(N.VOffsetTFlags, vtable + 2), "its fields")

    def _need(self, pos: int, size: int, what: str) -> None:
        if pos < 0 or size < 0 or pos + size > self._size:
            raise _Damaged(f"{self.what}: {what} lies outside the file")

    def _field(self, slot: int, size: int) -> int:
        """The position of a field, 0 where it is absent."""
        off = self.table.Offset(4 + 2 * slot)
        if off:
            self._need(self.table.Pos + off, size, f"field {slot}")
        return self.table.Pos + off if off else 0

    def int32(self, slot: int, default: int = 0) -> int:
        pos = self._field(slot, 4)
        return self.table.Get(self._n.Int32Flags, pos) if pos else default

    def vector(self, slot: int, elem_size: int) -> tuple[int, int] | None:
        """(start, length) of a vector field, None where it is absent."""
        pos = self._field(slot, 4)
        if not pos:
            return None
        start = self.table.Indirect(pos)
        self._need(start, 4, f"the vector of field {slot}")
        length = self.table.Get(self._n.Uint32Flags, start)
        self._need(start + 4, length * elem_size, f"the {length} element(s) of field {slot}")
        return start + 4, length

    def string(self, slot: int) -> str | None:
        at = self.vector(slot, 1)
        if at is None:
            return None
        try:
            return bytes(self.table.Bytes[at[0]:at[0] + at[1]]).decode("utf-8")
        except UnicodeDecodeError:
            raise _Damaged(f"{self.what}: its name is not UTF-8") from None

    def tables(self, slot: int, what: str) -> list[_Table]:
        at = self.vector(slot, 4)
        if at is None:
            return []
        start, length = at
        return [_Table(self.table.Bytes, self.table.Indirect(start + 4 * i), f"{what} {i}") for i in range(length)]


def parse(buf: bytes) -> tuple[int, int, int, dict[str, np.ndarray]]:
    """(format version, adapter version, model version, name -> array) of an adapter
    file's bytes; the arrays are read-only views of `buf`.  _Damaged says what is wrong."""
    from flatbuffers import util
    if len(buf) <= 8 or not util.BufferHasIdentifier(buf, 0, IDENTIFIER):
        raise _Damaged(f"it is not an adapter file (no '{IDENTIFIER.decode()}' identifier at byte 4)")
    from flatbuffers import encode, packer
    adapter = _Table(buf, encode.Get(packer.uoffset, buf, 0), "the adapter table")
    version = adapter.int32(_A_FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise _Damaged(f"its format version is {version}; this mlrt reads version {FORMAT_VERSION}")
    params: dict[str, np.ndarray] = {}
    for i, p in enumerate(adapter.tables(_A_PARAMETERS, "parameter")):
        name = p.string(_P_NAME)
        if not name:
            raise _Damaged(f"parameter {i} has no name")
        data_type = p.int32(_P_DATA_TYPE)
        if data_type not in SUPPORTED_TYPES:
            raise _Damaged(f"parameter '{name}' is of {_type_name(data_type)}, not a parameter type "
                           f"({_supported_names()})")
        dims_at = p.vector(_P_DIMS, 8)
        if dims_at is None or dims_at[1] == 0:
            raise _Damaged(f"parameter '{name}' has no dims")
        dims = np.frombuffer(buf, "<i8", dims_at[1], dims_at[0])
        if (dims < 0).any():
            raise _Damaged(f"parameter '{name}' has a negative dimension in {dims.tolist()}")
        dtype = _numpy_type(data_type)
        raw = p.vector(_P_RAW_DATA, 1)
        count = int(np.prod(dims.astype(object)))  # (exact: no int64 overflow)
        got = raw[1] if raw is not None else 0
        if count * dtype.itemsize != got:
            raise _Damaged(f"parameter '{name}' ({_type_name(data_type)}{dims.tolist()}) needs "
                           f"{count * dtype.itemsize} bytes of data, the file has {got}")
        array = np.frombuffer(buf, dtype.newbyteorder("<"), count, raw[0] if raw is not None else 0)
        if not array.dtype.isnative:
            array = array.astype(dtype)
        elif not array.flags.aligned:
            array = array.copy()
        params.setdefault(name, array.reshape(tuple(int(d) for d in dims)))  # (the first of a name, as onnxruntime)
    return version, adapter.int32(_A_ADAPTER_VERSION), adapter.int32(_A_MODEL_VERSION), params


def read(file_path, where: str) -> tuple[str, tuple[int, int, int, dict[str, np.ndarray]]]:
    """The path and parse() of an adapter file, with mlrt's errors naming the file."""
    path = _path(file_path, where)
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except FileNotFoundError:
        raise NoSuchFile(f"{where}: the adapter file '{path}' does not exist") from None
    except IsADirectoryError:
        raise InvalidModel(f"{where}: '{path}' is a directory, not an adapter file") from None
    except OSError as exc:
        raise InvalidModel(f"{where}: cannot read the adapter file '{path}' ({exc.strerror or exc})") from None
    try:
        return path, parse(buf)
    except _Damaged as exc:
        raise InvalidModel(f"{where}: '{path}' is not a valid onnxruntime adapter file: {exc}") from None
    except (ValueError, IndexError, OverflowError, struct.error) as exc:  # damage the checks above let through
        raise InvalidModel(f"{where}: '{path}' is not a valid onnxruntime adapter file: it is damaged "
                           f"({exc})") from None


def build(adapter_version: int, model_version: int, params: dict[str, np.ndarray]) -> memoryview:
    """An adapter file's bytes, as onnxruntime's writer lays them out."""
    import flatbuffers
    from flatbuffers import builder as fb_builder
    size = sum(v.nbytes + len(k) + 8 * v.ndim + 64 for k, v in params.items()) + 256
    if size >= fb_builder.Builder.MAX_BUFFER_SIZE:
        raise InvalidArgument(f"export_adapter: the parameters take {size} bytes; an adapter file holds less than 2 GB")
    b = flatbuffers.Builder(size)
    offsets = []
    for name, value in params.items():
        name_at = b.CreateString(name)
        dims_at = b.CreateNumpyVector(np.asarray(value.shape, "<i8"))
        data = np.ascontiguousarray(value, value.dtype.newbyteorder("<")).reshape(-1).view(np.uint8)
        b.StartVector(1, data.size, _RAW_DATA_ALIGNMENT)  # (CreateByteVector aligns to 4 only)
        b.head -= data.size
        b.Bytes[b.head:b.head + data.size] = data.data
        data_at = b.EndVector()
        b.StartObject(4)
        b.PrependUOffsetTRelativeSlot(_P_NAME, name_at, 0)
        b.PrependUOffsetTRelativeSlot(_P_DIMS, dims_at, 0)
        b.PrependInt32Slot(_P_DATA_TYPE, _element_type(value.dtype), 0)
        b.PrependUOffsetTRelativeSlot(_P_RAW_DATA, data_at, 0)
        offsets.append(b.EndObject())
    b.StartVector(4, len(offsets), 4)
    for at in reversed(offsets):
        b.PrependUOffsetTRelative(at)
    params_at = b.EndVector()
    b.StartObject(4)
    b.PrependInt32Slot(_A_FORMAT_VERSION, FORMAT_VERSION, 0)
    b.PrependInt32Slot(_A_ADAPTER_VERSION, adapter_version, 0)
    b.PrependInt32Slot(_A_MODEL_VERSION, model_version, 0)
    b.PrependUOffsetTRelativeSlot(_A_PARAMETERS, params_at, 0)
    b.Finish(b.EndObject(), file_identifier=IDENTIFIER)
    return memoryview(b.Bytes)[b.Head():]


class LoraAdapter:
    """A LoRA adapter's parameters, loaded from an adapter file with Load(path) and made
    active for a run with RunOptions.add_active_adapter(adapter)."""

    def __init__(self):
        self._params: dict[str, np.ndarray] = {}
        self._path: str | None = None

    def Load(self, adapter_file_path) -> None:  # noqa: N802 - onnxruntime's name
        """Read the adapter file at `adapter_file_path` (onnxruntime's adapter format;
        an AdapterFormat exports one); its parameters replace any loaded before.
        NoSuchFile where there is no file, InvalidModel where it is not an adapter file."""
        path, (_, _, _, params) = read(adapter_file_path, "LoraAdapter.Load")
        self._params, self._path = params, path

    def _describe(self) -> str:
        return f"LoRA adapter '{self._path}'" if self._path else "LoRA adapter"

    def __repr__(self) -> str:
        if self._path is None:
            return "<LoraAdapter (not loaded)>"
        return f"<LoraAdapter '{self._path}': {', '.join(self._params) or 'no parameters'}>"


class AdapterFormat:
    """Makes and reads adapter files: versions and parameters (name -> OrtValue),
    written by export_adapter(path) and read by AdapterFormat.read_adapter(path)."""

    def __init__(self):
        self._format_version = FORMAT_VERSION
        self._adapter_version = 0
        self._model_version = 0
        self._params: dict[str, np.ndarray] = {}

    @staticmethod
    def read_adapter(file_path) -> AdapterFormat:
        """The versions and parameters of the adapter file at `file_path`; NoSuchFile where
        there is no file, InvalidModel where it is not an adapter file."""
        _, (fmt, adapter_version, model_version, params) = read(file_path, "AdapterFormat.read_adapter")
        adapter = AdapterFormat()
        adapter._format_version, adapter._adapter_version, adapter._model_version = fmt, adapter_version, model_version
        adapter._params = params
        return adapter

    def export_adapter(self, file_path) -> None:
        """Write the versions and parameters to `file_path` as an adapter file (which
        onnxruntime's LoraAdapter loads too)."""
        path = _path(file_path, "export_adapter")
        data = build(self._adapter_version, self._model_version, self._params)
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as exc:
            raise InvalidArgument(f"export_adapter: cannot write '{path}' ({exc.strerror or exc})") from None

    def get_format_version(self) -> int:
        return self._format_version

    def set_adapter_version(self, adapter_version: int) -> None:
        self._adapter_version = _version(adapter_version, "the adapter version")

    def get_adapter_version(self) -> int:
        return self._adapter_version

    def set_model_version(self, model_version: int) -> None:
        self._model_version = _version(model_version, "the model version")

    def get_model_version(self) -> int:
        return self._model_version

    def set_parameters(self, params: dict) -> None:
        """The parameters to export (name -> OrtValue, or numpy array), replacing any set
        before: tensors of at least one dimension of a numeric type onnxruntime loads
        (not bool or string)."""
        if not isinstance(params, dict):
            raise InvalidArgument(f"set_parameters: expected a dict of name -> OrtValue, got {type(params).__name__}")
        self._params = {name: _parameter(name, value, "set_parameters") for name, value in params.items()}

    def get_parameters(self) -> dict[str, OrtValue]:
        """name -> OrtValue of the parameters (those read are read-only views of the file's bytes)."""
        return {name: OrtValue(value) for name, value in self._params.items()}


def with_adapters(session, input_feed, adapters) -> dict:
    """`input_feed` with the parameters of the active `adapters` added (InferenceSession._run
    calls this for RunOptions with adapters): the first adapter giving a name wins, and a
    parameter wins over the feed's value.  Each parameter must name a graph input or an
    overridable initializer of the session's model and match its type and shape."""
    if not isinstance(input_feed, dict):
        return input_feed  # (_check_feeds says what is wrong)
    given: dict[str, tuple[np.ndarray, LoraAdapter]] = {}
    for adapter in adapters:
        for name, value in adapter._params.items():
            given.setdefault(name, (value, adapter))
    if not given:
        return input_feed
    types = session._input_types
    required = {a.name for a in session._inputs}
    for name, (value, adapter) in given.items():
        vt = types.get(name)
        where = f"{adapter._describe()}: parameter '{name}'"
        if vt is None:
            inputs = ", ".join(a.name for a in session._inputs) or "none"
            overridable = ", ".join(a.name for a in session._overridable) or "none"
            raise InvalidArgument(f"{where} is not an input of this model (inputs: {inputs}; overridable "
                                  f"initializers: {overridable})")
        if name in required and name not in input_feed:
            # (onnxruntime checks the feed for the model's required inputs before adding parameters)
            raise InvalidArgument(f"input '{name}' is missing: an adapter parameter does not stand for a required "
                                  "input of the model, feed it")
        _check(vt, value, where)
    return {**input_feed, **{name: value for name, (value, _) in given.items()}}


def _check(vt, value: np.ndarray, where: str) -> None:
    if vt.kind != "tensor":
        raise InvalidArgument(f"{where}: the model's input is a {vt.kind}, an adapter parameter is a tensor")
    if vt.elem_type:
        want = _numpy_type(vt.elem_type)
        if value.dtype != want:
            raise InvalidArgument(f"{where} is {_type_name(_element_type(value.dtype))}, the model's input is "
                                  f"{_type_name(vt.elem_type)}")
    if vt.shape is not None:
        if value.ndim != len(vt.shape):
            raise InvalidArgument(f"{where} has shape {list(value.shape)}, the model's input has rank {len(vt.shape)} "
                                  f"(shape {list(vt.shape)})")
        for d, (want_dim, got) in enumerate(zip(vt.shape, value.shape)):
            if isinstance(want_dim, int) and want_dim > 0 and want_dim != got:
                raise InvalidArgument(f"{where} has shape {list(value.shape)}, the model's input has shape "
                                      f"{list(vt.shape)} (dimension {d} differs)")


__all__ = ["LoraAdapter", "AdapterFormat"]
