"""Feature values: the Tensor* classes and ImageFeatureValue (Windows ML's
TensorFloat, TensorInt64Bit, ..., ImageFeatureValue), numpy-backed."""

from __future__ import annotations

import numpy as np

from .._errors import InvalidArgument
from ..media import VideoFrame
from ._model import TensorKind


class Tensor:
    """A tensor value of one element type: create(shape), create_from_array(shape, data),
    create_from_numpy(array); .shape, .tensor_kind, .numpy(), and numpy's __array__."""

    tensor_kind: TensorKind = TensorKind.UNDEFINED
    dtype: np.dtype = np.dtype(object)

    def __init__(self, array: np.ndarray):
        self._array = array

    @classmethod
    def create(cls, shape=()) -> "Tensor":
        """A tensor of zeros (empty strings) of this shape."""
        shape = InvalidArgument.check_shape(shape, cls.__name__)
        return cls(np.full(shape, "", object) if cls.dtype == object else np.zeros(shape, cls.dtype))

    @classmethod
    def create_from_array(cls, shape, data) -> "Tensor":
        """A tensor of this shape holding `data` (a flat sequence, row-major)."""
        shape = InvalidArgument.check_shape(shape, cls.__name__)
        flat = np.array(list(data) if cls.dtype == object else data, dtype=cls.dtype).reshape(-1)
        if flat.size != int(np.prod(shape, dtype=np.int64)):
            raise InvalidArgument(f"{cls.__name__}.create_from_array: {flat.size} values for shape {list(shape)} "
                                  f"({int(np.prod(shape, dtype=np.int64))} expected)")
        return cls(flat.reshape(shape))

    @classmethod
    def create_from_numpy(cls, array) -> "Tensor":
        """A tensor over `array` (converted to this element type if it is not)."""
        a = np.asarray(array)
        if cls.dtype == object:
            a = a.astype(object)
        elif a.dtype != cls.dtype:
            if not np.can_cast(a.dtype, cls.dtype, "same_kind"):
                raise InvalidArgument(f"{cls.__name__}.create_from_numpy: cannot hold an array of {a.dtype}")
            a = a.astype(cls.dtype)
        return cls(a)

    @property
    def shape(self) -> tuple:
        return tuple(self._array.shape)

    def numpy(self) -> np.ndarray:
        return self._array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={list(self.shape)})"


def _tensor_class(name: str, kind: TensorKind, dtype) -> type:
    return type(name, (Tensor,), {"tensor_kind": kind, "dtype": np.dtype(dtype), "__doc__": f"A {kind.name} tensor.",
                                  "__module__": __name__})


TensorFloat = _tensor_class("TensorFloat", TensorKind.FLOAT, np.float32)
TensorFloat16Bit = _tensor_class("TensorFloat16Bit", TensorKind.FLOAT16, np.float16)
TensorDouble = _tensor_class("TensorDouble", TensorKind.DOUBLE, np.float64)
TensorInt8Bit = _tensor_class("TensorInt8Bit", TensorKind.INT8, np.int8)
TensorUInt8Bit = _tensor_class("TensorUInt8Bit", TensorKind.UINT8, np.uint8)
TensorInt16Bit = _tensor_class("TensorInt16Bit", TensorKind.INT16, np.int16)
TensorUInt16Bit = _tensor_class("TensorUInt16Bit", TensorKind.UINT16, np.uint16)
TensorInt32Bit = _tensor_class("TensorInt32Bit", TensorKind.INT32, np.int32)
TensorUInt32Bit = _tensor_class("TensorUInt32Bit", TensorKind.UINT32, np.uint32)
TensorInt64Bit = _tensor_class("TensorInt64Bit", TensorKind.INT64, np.int64)
TensorUInt64Bit = _tensor_class("TensorUInt64Bit", TensorKind.UINT64, np.uint64)
TensorBoolean = _tensor_class("TensorBoolean", TensorKind.BOOLEAN, np.bool_)
TensorString = _tensor_class("TensorString", TensorKind.STRING, object)

TENSOR_CLASSES = {c.tensor_kind: c for c in (TensorFloat, TensorFloat16Bit, TensorDouble, TensorInt8Bit, TensorUInt8Bit,
                                             TensorInt16Bit, TensorUInt16Bit, TensorInt32Bit, TensorUInt32Bit,
                                             TensorInt64Bit, TensorUInt64Bit, TensorBoolean, TensorString)}


class ImageFeatureValue:
    """A frame as a feature value (ImageFeatureValue.CreateFromVideoFrame)."""

    def __init__(self, frame: VideoFrame):
        if not isinstance(frame, VideoFrame):
            raise InvalidArgument(f"ImageFeatureValue: expected a VideoFrame, got {type(frame).__name__}")
        self.video_frame = frame

    @classmethod
    def create_from_video_frame(cls, frame: VideoFrame) -> "ImageFeatureValue":
        return cls(frame)

    def __repr__(self) -> str:
        return f"ImageFeatureValue({self.video_frame!r})"
