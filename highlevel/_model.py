"""LearningModel and its feature descriptors (Windows ML's LearningModel,
TensorFeatureDescriptor, ImageFeatureDescriptor, MapFeatureDescriptor,
SequenceFeatureDescriptor)."""

from __future__ import annotations

import enum
import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import InvalidArgument, InvalidModel, NoSuchFile
from ..media import BitmapAlphaMode, BitmapPixelFormat, LearningModelPixelRange

if TYPE_CHECKING:  # (onnx is imported by the first LearningModel.load, not with mlrt.highlevel)
    import onnx


class TensorKind(enum.IntEnum):
    """Element types (the numbers are ONNX's, as in Windows ML)."""

    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOLEAN = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16


class LearningModelFeatureKind(enum.Enum):
    TENSOR = 0
    SEQUENCE = 1
    MAP = 2
    IMAGE = 3


def _kind(elem_type: int) -> TensorKind:
    try:
        return TensorKind(elem_type)
    except ValueError:
        return TensorKind.UNDEFINED


@dataclass(frozen=True)
class TensorFeatureDescriptor:
    name: str
    description: str
    is_required: bool
    tensor_kind: TensorKind
    shape: tuple  # ints; None for a free dimension; None for an unknown rank
    denotation: str = ""

    kind = LearningModelFeatureKind.TENSOR


@dataclass(frozen=True)
class ImageFeatureDescriptor:
    """An image input or output: a 4-D float tensor with the ONNX IMAGE denotation.
    `width`/`height` None are free; format and range come from the model's Image.*
    metadata (Bgr8 and 0..255 when it says nothing)."""

    name: str
    description: str
    is_required: bool
    tensor_kind: TensorKind
    shape: tuple
    bitmap_pixel_format: BitmapPixelFormat
    bitmap_alpha_mode: BitmapAlphaMode
    width: int | None
    height: int | None
    pixel_range: LearningModelPixelRange

    kind = LearningModelFeatureKind.IMAGE


@dataclass(frozen=True)
class MapFeatureDescriptor:
    name: str
    description: str
    is_required: bool
    key_kind: TensorKind
    value_descriptor: object

    kind = LearningModelFeatureKind.MAP


@dataclass(frozen=True)
class SequenceFeatureDescriptor:
    name: str
    description: str
    is_required: bool
    element_descriptor: object

    kind = LearningModelFeatureKind.SEQUENCE


_IMAGE_FORMATS = {"gray8": BitmapPixelFormat.GRAY8, "rgb8": BitmapPixelFormat.RGB8, "bgr8": BitmapPixelFormat.BGR8}


def image_metadata(metadata) -> tuple[BitmapPixelFormat | None, LearningModelPixelRange | None]:
    """The pixel format and range the model's Image.* metadata names (None where it does not)."""
    fmt = metadata.get("Image.BitmapPixelFormat")
    rng = metadata.get("Image.NominalPixelRange")
    fmt = _IMAGE_FORMATS.get(fmt.strip().lower()) if fmt else None
    try:
        rng = LearningModelPixelRange.parse(rng) if rng else None
    except InvalidArgument:
        rng = None
    return fmt, rng


def _describe(t: onnx.TypeProto, name: str, doc: str, required: bool, metadata) -> object:
    which = t.WhichOneof("value")
    if which == "tensor_type":
        tt = t.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim) \
            if tt.HasField("shape") else None
        kind = _kind(tt.elem_type)
        if t.denotation == "IMAGE" and kind in (TensorKind.FLOAT, TensorKind.FLOAT16) and shape and len(shape) == 4:
            fmt, rng = image_metadata(metadata)
            channels = shape[1]
            if fmt is None:
                fmt = BitmapPixelFormat.GRAY8 if channels == 1 else BitmapPixelFormat.BGR8
            return ImageFeatureDescriptor(name, doc, required, kind, shape, fmt, BitmapAlphaMode.PREMULTIPLIED,
                                          shape[3], shape[2], rng or LearningModelPixelRange.ZERO_TO_255)
        return TensorFeatureDescriptor(name, doc, required, kind, shape, t.denotation)
    if which == "sequence_type":
        return SequenceFeatureDescriptor(name, doc, required, _describe(t.sequence_type.elem_type, name, doc, required,
                                                                        metadata))
    if which == "map_type":
        return MapFeatureDescriptor(name, doc, required, _kind(t.map_type.key_type),
                                    _describe(t.map_type.value_type, name, doc, required, metadata))
    if which == "optional_type":
        return _describe(t.optional_type.elem_type, name, doc, False, metadata)
    return TensorFeatureDescriptor(name, doc, required, TensorKind.UNDEFINED, None)


def _check_not_empty(proto: onnx.ModelProto, what: str) -> None:
    """InvalidModel for what protobuf reads from an empty file (or from bytes that hold
    no model): no IR version, no graph.  The rest is checked as a session loads it."""
    if proto.ir_version <= 0 or not proto.HasField("graph"):
        why = "it is empty" if not proto.ByteSize() else \
            f"ir_version {proto.ir_version}, {'a' if proto.HasField('graph') else 'no'} graph"
        raise InvalidModel(f"LearningModel.load: {what} holds no ONNX model ({why})")


class LearningModel:
    """An ONNX model and what it declares: LearningModel.load(path | bytes | binary file)."""

    def __init__(self, proto: onnx.ModelProto, source):
        self._proto = proto
        self._source = source  # the path (external data resolves beside it) or the bytes
        m = proto
        self._about = (m.producer_name, m.graph.name, m.domain, m.doc_string, m.model_version)
        self.metadata = types.MappingProxyType({p.key: p.value for p in m.metadata_props})
        init = {t.name for t in m.graph.initializer}
        self.input_features = tuple(_describe(v.type, v.name, v.doc_string, True, self.metadata)
                                    for v in m.graph.input if v.name not in init)
        self.output_features = tuple(_describe(v.type, v.name, v.doc_string, True, self.metadata)
                                     for v in m.graph.output)

    @classmethod
    def load(cls, source) -> "LearningModel":
        """From a file path, the model's bytes, or a binary file object (LoadFromFilePath /
        LoadFromStream)."""
        import onnx
        if isinstance(source, (str, os.PathLike)):
            path = Path(os.fspath(source))
            if path.is_dir():
                raise InvalidModel(f"LearningModel.load: {path} is a directory, not a model file")
            if not path.exists():
                raise NoSuchFile(f"LearningModel.load: model file {path} does not exist")
            if not path.is_file():
                raise InvalidModel(f"LearningModel.load: {path} is not a regular file")
            try:
                proto = onnx.load_model(str(path), load_external_data=False)
            except Exception as exc:
                raise InvalidModel(f"LearningModel.load: {path} is not an ONNX model ({exc})") from None
            _check_not_empty(proto, str(path))
            return cls(proto, str(path))
        if hasattr(source, "read"):
            source = source.read()
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
            try:
                proto = onnx.load_model_from_string(data)
            except Exception as exc:
                raise InvalidModel(f"LearningModel.load: {len(data)} bytes are not an ONNX model ({exc})") from None
            _check_not_empty(proto, f"the data given ({len(data)} bytes)")
            return cls(proto, data)
        raise InvalidArgument(f"LearningModel.load: expected a path, bytes or a binary file, got {type(source).__name__}")

    # Windows ML's properties (kept after close())
    @property
    def author(self) -> str:
        return self._about[0]

    @property
    def name(self) -> str:
        return self._about[1]

    @property
    def domain(self) -> str:
        return self._about[2]

    @property
    def description(self) -> str:
        return self._about[3]

    @property
    def version(self) -> int:
        return self._about[4]

    def _model(self) -> onnx.ModelProto:
        if self._proto is None:
            raise InvalidArgument("the LearningModel is closed (close_model_on_session_creation, or close())")
        return self._proto

    def source(self):
        """What a session loads: the file path or the bytes (InvalidArgument once closed)."""
        self._model()
        return self._source

    @property
    def is_closed(self) -> bool:
        return self._proto is None

    def close(self) -> None:
        """Free the model; sessions made from it keep working, new ones cannot be made."""
        self._proto = None
        self._source = None

    def __enter__(self) -> "LearningModel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._proto is None else f"{len(self.input_features)} inputs, " \
                                                      f"{len(self.output_features)} outputs"
        return f"LearningModel({state})"
