"""mlrt.media: frames and what models see of them (shared/HIGHLEVEL.md).

`VideoFrame` holds 8-bit pixels on the CPU or in a device provider's memory (the
OpenCL GPU's, or a registered provider's), made from a file (Pillow, EXIF orientation
applied), a PIL image, a numpy array with its `BitmapPixelFormat`, or empty;
`VideoSource` iterates the frames of a video file, camera or stream (OpenCV's
VideoCapture).  `tensorize` / `detensorize` turn frames into a model's image tensor
and back (C kernels for host tensors, the device provider's image kernels for device
tensors), by an `ImageTarget` that the high-level API derives from the model.
"""

from ._formats import BitmapAlphaMode, BitmapBounds, BitmapPixelFormat, LearningModelPixelRange
from ._frame import VideoFrame
from ._source import VideoSource
from ._tensorize import ImageTarget, centred_crop, detensorize, tensorize

__all__ = ["BitmapAlphaMode", "BitmapBounds", "BitmapPixelFormat", "LearningModelPixelRange", "VideoFrame",
           "VideoSource", "ImageTarget", "centred_crop", "detensorize", "tensorize"]
