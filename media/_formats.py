"""Pixel formats, alpha modes, pixel ranges and bounds (Windows ML's BitmapPixelFormat,
BitmapAlphaMode, LearningModelPixelRange and BitmapBounds, spelled the Python way)."""

from __future__ import annotations

import enum
import operator
from typing import NamedTuple

import numpy as np

from .._errors import InvalidArgument


class BitmapPixelFormat(enum.Enum):
    """How a frame's pixels are laid out in memory.  The value is the layout's code in
    the C kernels (native/kernels/tensorize.h); NV12 (a full-size luma plane then a
    half-size interleaved U, V plane) is converted to BGRA8 before it reaches them."""

    BGRA8 = 0
    RGBA8 = 1
    BGR8 = 2
    RGB8 = 3
    GRAY8 = 4
    NV12 = 5

    @property
    def channels(self) -> int:
        """Bytes per pixel of the packed formats (NV12: 1, the luma plane's)."""
        return {0: 4, 1: 4, 2: 3, 3: 3, 4: 1, 5: 1}[self.value]

    @property
    def has_alpha(self) -> bool:
        return self in (BitmapPixelFormat.BGRA8, BitmapPixelFormat.RGBA8)

    @property
    def is_rgb_order(self) -> bool:
        return self in (BitmapPixelFormat.RGBA8, BitmapPixelFormat.RGB8)

    @classmethod
    def parse(cls, value) -> "BitmapPixelFormat":
        """A format from itself, its name (any case: "bgra8", "Rgb8") or Windows ML's
        metadata spelling ("Gray8", "Bgr8", "Rgb8")."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                return cls[value.strip().upper()]
            except KeyError:
                pass
        raise InvalidArgument(f"unknown pixel format {value!r}; use one of {', '.join(f.name for f in cls)}")


class BitmapAlphaMode(enum.Enum):
    PREMULTIPLIED = 0
    STRAIGHT = 1
    IGNORE = 2


class LearningModelPixelRange(enum.Enum):
    """The nominal range of an image tensor's values: value = pixel / scale - shift."""

    ZERO_TO_255 = 0
    ZERO_TO_ONE = 1
    MINUS_ONE_TO_ONE = 2

    @property
    def scale_shift(self) -> tuple[float, float]:
        return {0: (1.0, 0.0), 1: (255.0, 0.0), 2: (127.5, 1.0)}[self.value]

    @classmethod
    def parse(cls, value) -> "LearningModelPixelRange":
        """A range from itself, its name, or the ONNX metadata spelling
        (NominalRange_0_255, Normalized_0_1, Normalized_1_1)."""
        if isinstance(value, cls):
            return value
        key = str(value).strip().lower()
        for names, member in ((("nominalrange_0_255", "zero_to_255", "0_255"), cls.ZERO_TO_255),
                              (("normalized_0_1", "zero_to_one", "0_1"), cls.ZERO_TO_ONE),
                              (("normalized_1_1", "minus_one_to_one", "-1_1"), cls.MINUS_ONE_TO_ONE)):
            if key in names:
                return member
        raise InvalidArgument(f"unknown pixel range {value!r}; use one of {', '.join(m.name for m in cls)}")


class BitmapBounds(NamedTuple):
    """A rectangle of a frame, in pixels: left, top, width, height."""

    x: int
    y: int
    width: int
    height: int


# -- what the image kernels' wrappers (_cpu.py, _gpu.py) check alike -----------------------------------
def kernel_format(pixel_format) -> BitmapPixelFormat:
    """A packed format the image kernels read: a BitmapPixelFormat, its code or its name
    (NV12 is converted to BGRA8 before a kernel sees it)."""
    if isinstance(pixel_format, (int, np.integer)) and not isinstance(pixel_format, (bool, BitmapPixelFormat)):
        try:
            fmt = BitmapPixelFormat(int(pixel_format))
        except ValueError:
            raise InvalidArgument(f"unknown pixel format code {pixel_format}") from None
    else:
        fmt = BitmapPixelFormat.parse(pixel_format)
    if fmt is BitmapPixelFormat.NV12:
        raise InvalidArgument("NV12 frames are converted to BGRA8 before they reach the image kernels")
    return fmt


def per_channel(values, c: int, what: str) -> tuple:
    """`values` as c floats, one per tensor channel."""
    try:
        v = tuple(float(x) for x in values)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{what} must be {c} numbers (one per tensor channel), got {values!r}") from None
    if len(v) != c:
        raise InvalidArgument(f"{what} must be {c} numbers (one per tensor channel), got {len(v)}")
    return v


def batch_index(index) -> int:
    try:
        if isinstance(index, bool):
            raise TypeError
        return operator.index(index)
    except TypeError:
        raise InvalidArgument(f"batch index must be an integer, got {index!r}") from None
