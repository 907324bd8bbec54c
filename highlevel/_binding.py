"""LearningModelBinding: the values of one evaluation, by feature name (Windows ML's
LearningModelBinding), and how frames become a model's image tensors."""

from __future__ import annotations

import numpy as np

from .._errors import InvalidArgument
from ..lowlevel import OrtValue
from ..media import (BitmapPixelFormat, ImageTarget, LearningModelPixelRange, VideoFrame, tensorize)
from ._model import ImageFeatureDescriptor, LearningModelFeatureKind, TensorKind, image_metadata
from ._values import ImageFeatureValue, Tensor

_IMAGE_DTYPES = {TensorKind.FLOAT: np.dtype(np.float32), TensorKind.FLOAT16: np.dtype(np.float16),
                 TensorKind.UINT8: np.dtype(np.uint8)}
_TENSOR_FORMATS = {BitmapPixelFormat.BGRA8: BitmapPixelFormat.BGR8, BitmapPixelFormat.RGBA8: BitmapPixelFormat.RGB8}


class Feature:
    """One input or output of a session: its descriptor and its shape after the
    session's dimension overrides (ints, None where free)."""

    def __init__(self, descriptor, shape, is_input: bool, metadata):
        self.descriptor = descriptor
        self.name = descriptor.name
        self.shape = shape
        self.is_input = is_input
        self.metadata = metadata

    @property
    def dtype(self) -> np.dtype | None:
        kind = getattr(self.descriptor, "tensor_kind", None)
        if kind in (None, TensorKind.UNDEFINED):
            return None
        if kind == TensorKind.STRING:
            return np.dtype(object)
        from onnx import helper  # (imported with the first model, not with mlrt.highlevel)
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(kind)))

    def image_layout(self) -> tuple[int, bool] | None:
        """(channels, nhwc) when frames can bind here: a 4-D float32/float16/uint8 tensor
        with 1 or 3 channels first (NCHW) or last (NHWC); None otherwise."""
        kind = getattr(self.descriptor, "tensor_kind", None)
        if kind not in _IMAGE_DTYPES or self.shape is None or len(self.shape) != 4:
            return None
        if isinstance(self.descriptor, ImageFeatureDescriptor) or self.shape[1] in (1, 3):
            return (self.shape[1] or 3), False
        if self.shape[3] in (1, 3):
            return self.shape[3], True
        if self.shape[1] is None:
            return 3, False
        return None

    def image_target(self, pixel_format=None, pixel_range=None, mean=None, std=None) -> ImageTarget:
        """The tensor image this feature takes, by the bind properties, then the model's
        Image.* metadata, then the guess (1 channel Gray8, 3 Bgr8; 0..255)."""
        layout = self.image_layout()
        if layout is None:
            raise InvalidArgument(f"'{self.name}' is not an image feature: frames bind to 4-D float32, float16 or "
                                  f"uint8 tensors with 1 or 3 channels, this one is {self.describe()}")
        channels, nhwc = layout
        meta_fmt, meta_range = image_metadata(self.metadata)
        fmt = BitmapPixelFormat.parse(pixel_format) if pixel_format is not None else meta_fmt
        fmt = _TENSOR_FORMATS.get(fmt, fmt)
        if fmt is None:
            fmt = BitmapPixelFormat.GRAY8 if channels == 1 else BitmapPixelFormat.BGR8
        if (fmt is BitmapPixelFormat.GRAY8) != (channels == 1) or fmt is BitmapPixelFormat.NV12:
            raise InvalidArgument(f"'{self.name}': pixel format {fmt.name} does not describe a {channels}-channel "
                                  "tensor (use GRAY8 for 1 channel, BGR8 or RGB8 for 3)")
        rng = LearningModelPixelRange.parse(pixel_range) if pixel_range is not None else meta_range
        rng = rng or LearningModelPixelRange.ZERO_TO_255
        mean = mean if mean is not None else _floats(self.metadata.get("Image.Mean"))
        std = std if std is not None else _floats(self.metadata.get("Image.Std"))
        h, w = (self.shape[1], self.shape[2]) if nhwc else (self.shape[2], self.shape[3])
        return ImageTarget(_IMAGE_DTYPES[self.descriptor.tensor_kind], channels, h, w, nhwc, fmt, rng,
                           None if mean is None else tuple(np.ravel(mean)),
                           None if std is None else tuple(np.ravel(std)))

    def describe(self) -> str:
        dtype = self.dtype
        shape = "?" if self.shape is None else "[" + ", ".join("?" if d is None else str(d) for d in self.shape) + "]"
        what = ("string" if dtype == object else dtype.name) if dtype is not None else self.descriptor.kind.name.lower()
        return f"{what}{shape}"


def _floats(text) -> tuple | None:
    if not text:
        return None
    try:
        return tuple(float(v) for v in text.replace(",", " ").split())
    except ValueError:
        return None


def _frames(value) -> list[VideoFrame] | None:
    """The frames of a frame, an ImageFeatureValue or a list of them (None otherwise)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    if not items or not all(isinstance(v, (VideoFrame, ImageFeatureValue)) for v in items):
        if isinstance(value, (list, tuple)) and any(isinstance(v, (VideoFrame, ImageFeatureValue)) for v in items):
            raise InvalidArgument("a batch of frames must hold only VideoFrames or ImageFeatureValues")
        return None
    return [v.video_frame if isinstance(v, ImageFeatureValue) else v for v in items]


class LearningModelBinding:
    """Values bound to a session's inputs and outputs for evaluate().

    bind(name, value, ...) takes numpy arrays (and anything numpy reads), Tensor*
    values, VideoFrames and ImageFeatureValues (a list of them is a batch), lists and
    dicts for sequence and map features.  Names match case-insensitively.  A frame is
    tensorized when it is bound (on the session's device), by the properties given
    here, then the model's Image.* metadata, then the guess; an output bound to a frame,
    Tensor or array is written there by evaluate(), the others are returned new."""

    def __init__(self, session):
        from ._session import LearningModelSession
        if not isinstance(session, LearningModelSession):
            raise InvalidArgument(f"LearningModelBinding: expected a LearningModelSession, got {type(session).__name__}")
        self.session = session
        self._bound: dict[str, object] = {}     # feature name -> the value as given
        self._feeds: dict[str, object] = {}     # input name -> array or OrtValue
        self._images: dict[str, tuple] = {}     # output name -> (ImageTarget, frames)
        self._applied: dict[str, list] = {}

    def bind(self, name: str, value, *, bitmap_bounds=None, bitmap_pixel_format=None, pixel_range=None,
             mean=None, std=None) -> None:
        """Bind a value to the input or output `name`.  Image properties (frames only):
        `bitmap_bounds` the rectangle of the frame to use, scaled whole (a list: one
        per frame); `bitmap_pixel_format` BGR8 / RGB8 / GRAY8, the tensor's channel
        order; `pixel_range` its values; `mean`/`std` normalize each channel after it
        (in the tensor's channel order)."""
        feature = self.session._feature(name)
        frames = _frames(value)
        props = (bitmap_bounds, bitmap_pixel_format, pixel_range, mean, std)
        if frames is None and any(p is not None for p in props):
            raise InvalidArgument(f"'{feature.name}': bitmap_bounds, bitmap_pixel_format, pixel_range, mean and std "
                                  "apply to frames; this value is a " + type(value).__name__)
        if feature.is_input:
            if frames is not None:
                self._bind_frames(feature, frames, bitmap_bounds, bitmap_pixel_format, pixel_range, mean, std)
            else:
                self._feeds[feature.name] = self._tensor(feature, value)
                self._applied.pop(feature.name, None)
        else:
            if frames is not None:
                if bitmap_bounds is not None:
                    raise InvalidArgument(f"output '{feature.name}': bitmap_bounds applies to inputs")
                self._images[feature.name] = (feature.image_target(bitmap_pixel_format, pixel_range, mean, std), frames)
            else:
                self._images.pop(feature.name, None)
                self._output_tensor(feature, value)
        self._bound[feature.name] = value

    def _bind_frames(self, feature: Feature, frames, bounds, pixel_format, pixel_range, mean, std) -> None:
        target = feature.image_target(pixel_format, pixel_range, mean, std)
        n = feature.shape[0]
        if n is not None and n != len(frames):
            raise InvalidArgument(f"input '{feature.name}': the model takes a batch of {n}, got {len(frames)} frame(s)")
        if bounds is not None and len(frames) == 1 and not isinstance(bounds[0], (list, tuple)):
            bounds = [bounds]
        if bounds is not None and len(bounds) != len(frames):
            raise InvalidArgument(f"input '{feature.name}': {len(bounds)} bitmap_bounds for {len(frames)} frames")
        try:
            tensor, applied = tensorize(frames, target, bounds, device=self.session.device.memory,
                                        pool=self.session._pool)
        except InvalidArgument as exc:
            raise InvalidArgument(f"input '{feature.name}': {exc}") from None
        self._feeds[feature.name] = OrtValue(tensor) if self.session.device.is_gpu else tensor
        self._applied[feature.name] = applied

    @staticmethod
    def _tensor(feature: Feature, value):
        if isinstance(value, Tensor):
            value = value.numpy()
        if isinstance(value, OrtValue):
            return value
        if feature.descriptor.kind in (LearningModelFeatureKind.MAP, LearningModelFeatureKind.SEQUENCE):
            return value  # dicts and lists, checked by the run
        want = feature.dtype
        try:
            a = np.asarray(value)
        except Exception as exc:
            raise InvalidArgument(f"input '{feature.name}': cannot be read as an array ({exc})") from None
        if want is not None and a.dtype != want:
            if want == object and a.dtype.kind in "US":
                a = a.astype(object)
            elif a.dtype.kind in "biuf" and want.kind in "biuf" and np.can_cast(a.dtype, want, "same_kind") \
                    and a.dtype.kind == want.kind:
                a = a.astype(want)  # float64 -> float32 and the like, as Windows ML converts tensor kinds
            else:
                raise InvalidArgument(f"input '{feature.name}': expected {feature.describe()}, got an array of "
                                      f"{a.dtype}")
        _check_shape(feature, a.shape)
        return a

    def _output_tensor(self, feature: Feature, value) -> None:
        a = value.numpy() if isinstance(value, Tensor) else value
        if not isinstance(a, np.ndarray):
            raise InvalidArgument(f"output '{feature.name}': bind a numpy array, a Tensor value or a VideoFrame "
                                  f"(got {type(value).__name__})")
        if feature.dtype is not None and a.dtype != feature.dtype:
            raise InvalidArgument(f"output '{feature.name}': expected {feature.describe()}, the bound array is {a.dtype}")
        if not a.flags.writeable:
            raise InvalidArgument(f"output '{feature.name}': the bound array is read-only")
        _check_shape(feature, a.shape)

    def applied_bounds(self, name: str):
        """The rectangle of the frame that became input `name` (a list for a batch): maps
        detections in tensor coordinates back to the source frame."""
        feature = self.session._feature(name)
        applied = self._applied.get(feature.name)
        if applied is None:
            raise InvalidArgument(f"input '{feature.name}' has no frame bound")
        return applied[0] if len(applied) == 1 else list(applied)

    def clear(self) -> None:
        self._bound.clear()
        self._feeds.clear()
        self._images.clear()
        self._applied.clear()

    # mapping protocol over what is bound
    def __getitem__(self, name: str):
        feature = self.session._feature(name)
        if feature.name not in self._bound:
            raise KeyError(name)
        return self._bound[feature.name]

    def __contains__(self, name) -> bool:
        try:
            return self.session._feature(name).name in self._bound
        except InvalidArgument:
            return False

    def __len__(self) -> int:
        return len(self._bound)

    def __iter__(self):
        return iter(list(self._bound))

    def keys(self):
        return list(self._bound)

    def __repr__(self) -> str:
        return f"LearningModelBinding({', '.join(self._bound) or 'nothing bound'})"


def _check_shape(feature: Feature, shape) -> None:
    if feature.shape is None:
        return
    if len(shape) != len(feature.shape) or any(d is not None and d != s for d, s in zip(feature.shape, shape)):
        raise InvalidArgument(f"'{feature.name}': expected shape {feature.describe()}, got {list(shape)}")
