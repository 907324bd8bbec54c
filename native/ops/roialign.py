"""RoiAlign: for each region of interest (x1, y1, x2, y2 in X's scale before
spatial_scale), average or max of bilinear samples over an output_height x
output_width grid of bins (sampling_ratio samples per bin side, or ceil(bin size)).
Opset 10 keeps roi corners as given (output_half_pixel); 16 adds
coordinate_transformation_mode, default half_pixel (corners shifted by -0.5)."""

import numpy as np

from .._lib import enum_value
from ._base import Info, Op

# mode -> the constants of kernels/spatial.h (the numbers live there)
_MODES = {"avg": "MLRT_ROIALIGN_AVG", "max": "MLRT_ROIALIGN_MAX"}


class RoiAlign_10(Op):
    attributes = {"mode": "avg", "output_height": 1, "output_width": 1, "sampling_ratio": 0, "spatial_scale": 1.0}
    params = "mlrt_roialign_params"
    tolerance = (1e-4, 1e-5)

    def half_pixel(self) -> int:
        return 0

    def infer(self, inputs):
        x, rois, bi = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        if x.rank != 4:
            raise self.fail(f"X must be (N, C, H, W), got shape {x.shape}")
        if rois.rank != 2 or rois.shape[1] != 4:
            raise self.fail(f"rois must be (num_rois, 4), got shape {rois.shape}")
        if bi.rank != 1 or bi.shape[0] != rois.shape[0]:
            raise self.fail(f"batch_indices must be ({rois.shape[0]},), got shape {bi.shape}")
        if np.dtype(rois.dtype) != np.dtype(x.dtype):
            raise self.fail(f"rois must have X's type {np.dtype(x.dtype).name}")
        if self.a.mode not in _MODES:
            raise self.fail(f"mode '{self.a.mode}' is not one of avg, max")
        oh, ow = int(self.a.output_height), int(self.a.output_width)
        if oh < 1 or ow < 1 or int(self.a.sampling_ratio) < 0:
            raise self.fail(f"output_height {oh} / output_width {ow} must be positive, sampling_ratio not negative")
        return [Info(x.dtype, (rois.shape[0], x.shape[1], oh, ow))]

    def pack(self, inputs, outputs):
        return {"mode": enum_value(_MODES[self.a.mode]), "half_pixel": self.half_pixel(),
                "sampling_ratio": int(self.a.sampling_ratio), "spatial_scale": float(self.a.spatial_scale)}


class RoiAlign_16(RoiAlign_10):
    attributes = {**RoiAlign_10.attributes, "coordinate_transformation_mode": "half_pixel"}

    def half_pixel(self):
        mode = self.a.coordinate_transformation_mode
        if mode not in ("half_pixel", "output_half_pixel"):
            raise self.fail(f"coordinate_transformation_mode '{mode}' is not half_pixel or output_half_pixel")
        return int(mode == "half_pixel")
