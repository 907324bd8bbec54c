"""VideoSource: the frames of a video file, camera or stream, through OpenCV's VideoCapture."""

from __future__ import annotations

import os
import threading

import numpy as np

from .._errors import InvalidArgument
from ._formats import BitmapPixelFormat
from ._frame import VideoFrame


class VideoSource:
    """Iterate the frames of `source`: a file path, a camera index (int) or a stream URL.

    Each frame is a BGR8 VideoFrame whose `timestamp` is its position in seconds (the
    container's, or frame index / fps where the backend gives none).  `max_frames`
    stops early.  Use it as a context manager, or call close()."""

    def __init__(self, source, *, max_frames: int | None = None):
        import cv2  # imported when video is used: image-only apps never load OpenCV
        self._cv2 = cv2
        if isinstance(source, bool) or not isinstance(source, (int, str, os.PathLike)):
            raise InvalidArgument(f"VideoSource: expected a path, URL or camera index, got {type(source).__name__}")
        self.source = source
        target = source if isinstance(source, int) else os.fspath(source)
        if isinstance(target, str) and "://" not in target and not os.path.exists(target):
            raise InvalidArgument(f"VideoSource: {target} does not exist")
        self._capture = cv2.VideoCapture(target)
        if not self._capture.isOpened():
            self._capture.release()
            raise InvalidArgument(f"VideoSource: OpenCV cannot open {target!r} (not a video it can decode, "
                                  "or no such camera)")
        self.max_frames = max_frames
        self._lock = threading.Lock()
        self._index = 0

    @property
    def fps(self) -> float:
        return float(self._capture.get(self._cv2.CAP_PROP_FPS) or 0.0)

    @property
    def width(self) -> int:
        return int(self._capture.get(self._cv2.CAP_PROP_FRAME_WIDTH))

    @property
    def height(self) -> int:
        return int(self._capture.get(self._cv2.CAP_PROP_FRAME_HEIGHT))

    @property
    def frame_count(self) -> int | None:
        """Frames in the file, as its container says (None for cameras and streams)."""
        n = int(self._capture.get(self._cv2.CAP_PROP_FRAME_COUNT))
        return n if n > 0 else None

    def read(self) -> VideoFrame | None:
        """The next frame, or None at the end."""
        with self._lock:
            if self._capture is None or (self.max_frames is not None and self._index >= self.max_frames):
                return None
            ok, pixels = self._capture.read()
            if not ok or pixels is None:
                return None
            ms = float(self._capture.get(self._cv2.CAP_PROP_POS_MSEC))
            fps = self.fps
            stamp = ms / 1000.0 if ms > 0 or self._index == 0 else (self._index / fps if fps else None)
            self._index += 1
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
            return VideoFrame(np.ascontiguousarray(pixels), BitmapPixelFormat.GRAY8, stamp)
        return VideoFrame(pixels, BitmapPixelFormat.BGR8, stamp)

    def __iter__(self):
        while True:
            frame = self.read()
            if frame is None:
                return
            yield frame

    def close(self) -> None:
        with self._lock:
            if self._capture is not None:
                self._capture.release()
                self._capture = None

    def __enter__(self) -> "VideoSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"VideoSource({self.source!r})"
