"""VideoFrame: a picture in host memory (a SoftwareBitmap) or in a device's memory.

A frame holds 8-bit pixels [height, width, bytes per pixel] in one of the
BitmapPixelFormat layouts (NV12: [height * 3 / 2, width], the luma plane over the
interleaved chroma plane).  Frames made from numpy arrays share the caller's memory,
as Windows ML's SoftwareBitmap.CreateCopyFromBuffer does not but a numpy user
expects; `copy()` makes an independent one.  A frame on a device holds a value of
its provider's memory (an OpenCL DeviceTensor, ...), reached only through the provider
(native/providers/_base.py): media names no device.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .._errors import DeviceError, InvalidArgument
from ..native.providers import for_device, owner_of
from . import _cpu
from ._formats import BitmapBounds, BitmapPixelFormat

if TYPE_CHECKING:
    from PIL import Image

# A device's side (for OpenCL: pyopencl, the device runtime) and Pillow are imported by the
# first frame on the device and the first image file or PIL image, not with mlrt.media: a
# CPU app never loads a device provider's machinery, and a numpy-only one never loads Pillow.


def on_device(pixels) -> bool:
    """Whether `pixels` lives in a device provider's memory (not a host array)."""
    return owner_of(pixels) is not None


def to_host(pixels) -> np.ndarray:
    """`pixels` as a host array (device memory read back)."""
    p = owner_of(pixels)
    return pixels if p is None else p.to_host(pixels)


def device_provider(device: str | None = None):
    """The provider of a device kind (None or "gpu": the GPU provider); DeviceError when
    there is none."""
    kind = device or "gpu"
    p = for_device(kind)
    if p is None:
        raise DeviceError(f"no device provider for '{kind}' is available" +
                          (" (none is marked as the GPU)" if kind == "gpu" else ""))
    return p

F = BitmapPixelFormat
_PIL_MODES = {"RGB": F.RGB8, "RGBA": F.RGBA8, "L": F.GRAY8}
_TO_PIL = {F.RGB8: ("RGB", None), F.RGBA8: ("RGBA", None), F.GRAY8: ("L", None),
           F.BGR8: ("RGB", [2, 1, 0]), F.BGRA8: ("RGBA", [2, 1, 0, 3])}


def _nv12_to_bgra(nv12: np.ndarray) -> np.ndarray:
    import cv2
    return cv2.cvtColor(np.ascontiguousarray(nv12), cv2.COLOR_YUV2BGRA_NV12)


class VideoFrame:
    """Pixels and their format, on the CPU (`is_gpu` False) or a device (`device` names it)."""

    __slots__ = ("_pixels", "_format", "timestamp", "__weakref__")

    def __init__(self, pixels, pixel_format: BitmapPixelFormat, timestamp: float | None = None):
        fmt = BitmapPixelFormat.parse(pixel_format)
        shape = tuple(pixels.shape)
        if np.dtype(pixels.dtype) != np.uint8:
            raise InvalidArgument(f"VideoFrame: pixels must be uint8, got {np.dtype(pixels.dtype)}")
        if fmt is F.NV12:
            if len(shape) != 2 or shape[0] % 3 or shape[0] < 3 or shape[1] % 2:
                raise InvalidArgument(f"VideoFrame: NV12 pixels are [height * 3 / 2, width] with even sizes, "
                                      f"got shape {list(shape)}")
            if on_device(pixels):
                raise InvalidArgument("VideoFrame: NV12 frames live on the CPU (convert to BGRA8 for the GPU)")
        else:
            if len(shape) == 2 and fmt is F.GRAY8 and not on_device(pixels):
                pixels = pixels[:, :, None]
                shape = tuple(pixels.shape)
            if len(shape) != 3 or shape[2] != fmt.channels:
                raise InvalidArgument(f"VideoFrame: {fmt.name} pixels are [height, width, {fmt.channels}], "
                                      f"got shape {list(shape)}")
        if isinstance(pixels, np.ndarray) and pixels.strides[-1] != 1 and pixels.size:
            pixels = np.ascontiguousarray(pixels)
        self._pixels = pixels
        self._format = fmt
        self.timestamp = timestamp

    # -- making frames ------------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, array, pixel_format=None, timestamp: float | None = None) -> "VideoFrame":
        """A frame over a uint8 array: [H, W, 4] BGRA8/RGBA8, [H, W, 3] BGR8/RGB8, [H, W] or
        [H, W, 1] GRAY8, [H * 3 / 2, W] NV12.  Without a format, OpenCV's conventions are
        assumed: 4 channels BGRA8, 3 channels BGR8, one channel GRAY8."""
        a = np.asarray(array)
        if pixel_format is None:
            channels = a.shape[2] if a.ndim == 3 else 1
            pixel_format = {4: F.BGRA8, 3: F.BGR8, 1: F.GRAY8}.get(channels)
            if pixel_format is None or a.ndim not in (2, 3):
                raise InvalidArgument(f"VideoFrame.from_numpy: cannot tell the pixel format of shape {list(a.shape)}; "
                                      "pass pixel_format")
        return cls(a, pixel_format, timestamp)

    @classmethod
    def from_pil(cls, image: Image.Image) -> "VideoFrame":
        """A frame from a PIL image (RGB, RGBA and L keep their layout; other modes become RGB)."""
        from PIL import Image
        if not isinstance(image, Image.Image):
            raise InvalidArgument(f"VideoFrame.from_pil: expected a PIL image, got {type(image).__name__}")
        fmt = _PIL_MODES.get(image.mode)
        if fmt is None:
            image, fmt = image.convert("RGBA" if "A" in image.getbands() else "RGB"), None
            fmt = _PIL_MODES[image.mode]
        return cls(np.asarray(image), fmt)

    @classmethod
    def from_file(cls, path) -> "VideoFrame":
        """Decode an image file with Pillow, its EXIF orientation applied."""
        return cls._decoded(os.fspath(path), "VideoFrame.from_file", str(path))

    @classmethod
    def from_bytes(cls, data, name: str | None = None) -> "VideoFrame":
        """Decode an encoded image held in memory (the bytes of a PNG, JPEG, ... file, as
        `ray.data.read_binary_files` gives them) as from_file does; `name` (its path, say)
        names it in errors."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidArgument(f"VideoFrame.from_bytes: expected bytes, got {type(data).__name__}")
        import io
        return cls._decoded(io.BytesIO(bytes(data)), "VideoFrame.from_bytes", name or f"{len(data)} bytes")

    @classmethod
    def _decoded(cls, source, where: str, name: str) -> "VideoFrame":
        from PIL import Image, ImageOps
        try:
            with Image.open(source) as im:
                im = ImageOps.exif_transpose(im)
                im.load()
        except FileNotFoundError:
            raise InvalidArgument(f"{where}: {name} does not exist") from None
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise InvalidArgument(f"{where}: {name} is not a readable image ({exc})") from None
        return cls.from_pil(im)

    @classmethod
    def empty(cls, width: int, height: int, pixel_format=F.BGRA8, *, gpu: bool = False,
              device: str | None = None) -> "VideoFrame":
        """A frame of zeros (Windows ML's VideoFrame(format, width, height)); `gpu` puts it in
        the GPU provider's memory (CreateAsDirect3D11SurfaceBacked), `device` in that device
        kind's ("cpu": the host)."""
        fmt = BitmapPixelFormat.parse(pixel_format)
        for what, n in (("width", width), ("height", height)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise InvalidArgument(f"VideoFrame.empty: {what} must be an int >= 1, got {n!r}")
        shape = (height * 3 // 2, width) if fmt is F.NV12 else (height, width, fmt.channels)
        if fmt is F.NV12 and (width % 2 or height % 2):
            raise InvalidArgument(f"VideoFrame.empty: NV12 frames have even sizes, got {width}x{height}")
        if (gpu or device) and device != "cpu":
            if fmt is F.NV12:
                raise InvalidArgument("VideoFrame.empty: NV12 frames live on the CPU")
            return cls(device_provider(device).to_device(np.zeros(shape, np.uint8)), fmt)
        return cls(np.zeros(shape, np.uint8), fmt)

    # -- what it is ------------------------------------------------------------------------------
    @property
    def pixel_format(self) -> BitmapPixelFormat:
        return self._format

    @property
    def width(self) -> int:
        return int(self._pixels.shape[1])

    @property
    def height(self) -> int:
        h = int(self._pixels.shape[0])
        return h * 2 // 3 if self._format is F.NV12 else h

    @property
    def is_gpu(self) -> bool:
        """Whether the pixels are in a device's memory (not the host's)."""
        return on_device(self._pixels)

    @property
    def device(self) -> str:
        """The device kind the pixels live on: "cpu", or a device provider's (e.g. as
        OrtValue.device_name() says)."""
        p = owner_of(self._pixels)
        return "cpu" if p is None else p.device

    @property
    def bounds(self) -> BitmapBounds:
        return BitmapBounds(0, 0, self.width, self.height)

    def __repr__(self) -> str:
        where = "GPU" if self.is_gpu else "CPU"
        return f"VideoFrame({self.width}x{self.height} {self._format.name} on the {where})"

    # -- pixels out ---------------------------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """The pixels as a host array ([H, W, C]; GRAY8 [H, W]; NV12 [H * 3 / 2, W]); a CPU
        frame returns its own memory, a GPU frame a copy read back."""
        p = to_host(self._pixels)
        return p[:, :, 0] if self._format is F.GRAY8 else p

    def to_pil(self) -> Image.Image:
        if self._format is F.NV12:
            return VideoFrame(_nv12_to_bgra(self._pixels), F.BGRA8).to_pil()
        from PIL import Image
        mode, order = _TO_PIL[self._format]
        p = self.to_numpy()
        return Image.fromarray(np.ascontiguousarray(p[..., order] if order else p), mode)

    def copy(self) -> "VideoFrame":
        """An independent frame with the same pixels, on the same side."""
        p = owner_of(self._pixels)
        if p is not None:
            return VideoFrame(p.to_device(np.array(p.to_host(self._pixels))), self._format, self.timestamp)
        return VideoFrame(self._pixels.copy(), self._format, self.timestamp)

    def to_gpu(self, device: str | None = None) -> "VideoFrame":
        """This frame in the GPU provider's memory, or that of the device kind `device`
        (itself if it is there; NV12 becomes BGRA8)."""
        provider = device_provider(device)
        if owner_of(self._pixels) is provider:
            return self
        fmt, pixels = self.packed()
        return VideoFrame(provider.to_device(np.ascontiguousarray(to_host(pixels))), fmt, self.timestamp)

    def to_cpu(self) -> "VideoFrame":
        return VideoFrame(to_host(self._pixels), self._format, self.timestamp) if self.is_gpu else self

    def packed(self) -> tuple[BitmapPixelFormat, object]:
        """(format, pixels) in a layout the image kernels read: NV12 is converted to BGRA8."""
        if self._format is F.NV12:
            return F.BGRA8, _nv12_to_bgra(self._pixels)
        return self._format, self._pixels

    # -- copies ------------------------------------------------------------------------------------
    def copy_to(self, frame: "VideoFrame", source_bounds=None, destination_bounds=None) -> None:
        """Copy this frame into `frame`, scaling the source rectangle (whole frame by
        default) onto the destination rectangle (bilinear) and converting the pixel
        format: Windows ML's VideoFrame.CopyToAsync.  Pixels outside the destination
        rectangle keep their values."""
        if not isinstance(frame, VideoFrame):
            raise InvalidArgument(f"copy_to: expected a VideoFrame, got {type(frame).__name__}")
        if frame._format is F.NV12:
            raise InvalidArgument("copy_to: NV12 frames cannot be written to; copy into a BGRA8 frame")
        src = check_bounds(self, source_bounds, "copy_to source_bounds")
        dst = check_bounds(frame, destination_bounds, "copy_to destination_bounds")
        if _overlap(self._pixels, frame._pixels):  # reading and writing the same pixels: read a copy
            return self.copy().copy_to(frame, src, dst)
        fmt, pixels = self.packed()
        c = frame._format.channels
        alpha, beta = (1.0,) * c, (0.0,) * c
        out = frame._pixels
        device = owner_of(out)
        whole = dst == frame.bounds
        if device is not None and whole:  # straight into the device frame, as a batch of one NHWC image
            if owner_of(pixels) is not device:
                pixels = device.to_device(np.ascontiguousarray(to_host(pixels)))
            frame._pixels = device.image_kernel(
                "tensorize", pixels, out, _cpu.tensorize, pixel_format=fmt.value, crop=tuple(src), index=0,
                rgb=frame._format.is_rgb_order, nhwc=True, alpha=alpha, beta=beta)
            return
        pixels = to_host(pixels)
        if whole and device is None and out.flags.c_contiguous:
            _cpu.tensorize(pixels, fmt, tuple(src), out[None], 0, rgb=frame._format.is_rgb_order, nhwc=True,
                           alpha=alpha, beta=beta)
            return
        host = np.array(device.to_host(out)) if device is not None else out
        region = host[dst.y:dst.y + dst.height, dst.x:dst.x + dst.width, :]
        tmp = np.empty((1, dst.height, dst.width, c), np.uint8)
        _cpu.tensorize(pixels, fmt, tuple(src), tmp, 0, rgb=frame._format.is_rgb_order, nhwc=True,
                       alpha=alpha, beta=beta)
        region[...] = tmp[0]
        if device is not None:
            frame._pixels = device.to_device(host)


def _overlap(a, b) -> bool:
    if on_device(a) or on_device(b):
        return a is b
    return np.may_share_memory(a, b)


def check_bounds(frame: VideoFrame, bounds, what: str) -> BitmapBounds:
    """The bounds as BitmapBounds inside the frame (the whole frame when None)."""
    if bounds is None:
        return frame.bounds
    try:
        b = BitmapBounds(*(int(v) for v in bounds))
    except (TypeError, ValueError):
        raise InvalidArgument(f"{what}: expected (x, y, width, height), got {bounds!r}") from None
    if b.width < 1 or b.height < 1 or b.x < 0 or b.y < 0 or b.x + b.width > frame.width \
            or b.y + b.height > frame.height:
        raise InvalidArgument(f"{what}: {tuple(b)} is not a non-empty rectangle inside the "
                              f"{frame.width}x{frame.height} frame")
    return b

