"""ImageDecoder: an encoded image (a 1-D uint8 tensor holding a BMP, JPEG, JPEG 2000,
TIFF, PNG, WebP or PNM file) decoded to uint8 [H, W, C]: C = 3 for pixel_format
"RGB" / "BGR", 1 for "Grayscale".  A stream that cannot be decoded gives an empty
[0, 0, C] tensor, as the spec asks.

A host op: decoding is Pillow's (libjpeg-turbo, whose default "fancy" chroma
upsampling is the one the spec describes); the first frame of a multi-frame file is
used, EXIF orientation is not applied (the spec does not ask for it).
"""

import io
import warnings

import numpy as np

from ._host import _HostTensorOp

_CHANNELS = {"RGB": 3, "BGR": 3, "Grayscale": 1}


class ImageDecoder(_HostTensorOp):
    attributes = {"pixel_format": "RGB"}

    def run_host(self, values, runtime):
        from PIL import Image  # a project dependency; imported when the op runs

        fmt = self.a.pixel_format
        if fmt not in _CHANNELS:
            raise self.fail(f"pixel_format must be RGB, BGR or Grayscale, got {fmt!r}")
        data = self.tensor(values, 0, "encoded_stream")
        if data.dtype != np.uint8 or data.ndim != 1:
            raise self.bad(f"encoded_stream must be a 1-D uint8 tensor, got {data.dtype} of shape {list(data.shape)}")
        empty = np.zeros((0, 0, _CHANNELS[fmt]), dtype=np.uint8)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(data.tobytes())) as img:
                    img = img.convert("L" if fmt == "Grayscale" else "RGB")
                    pixels = np.asarray(img, dtype=np.uint8)
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning,
                EOFError):
            return [empty]
        if fmt == "Grayscale":
            return [np.ascontiguousarray(pixels[:, :, None])]
        if fmt == "BGR":
            pixels = pixels[:, :, ::-1]
        return [np.ascontiguousarray(pixels)]
