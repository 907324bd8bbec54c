"""GridSample: Y[n, c, out...] is X[n, c] sampled at the normalised positions
grid[n, out..., :] (x first, i.e. the last spatial axis).  Opset 16 is 2-D with modes
bilinear / nearest / bicubic; opset 20 is N-D with linear / nearest / cubic."""

import numpy as np

from .._lib import enum_value
from ._base import Info, Op

# ONNX attribute strings -> the constants of kernels/gridsample.h (the numbers live there)
PADDING = {"zeros": "MLRT_GRIDSAMPLE_ZEROS", "border": "MLRT_GRIDSAMPLE_BORDER",
           "reflection": "MLRT_GRIDSAMPLE_REFLECTION"}


class GridSample_16(Op):
    attributes = {"align_corners": 0, "mode": "bilinear", "padding_mode": "zeros"}
    params = "mlrt_gridsample_params"
    tolerance = (1e-4, 1e-4)  # float32 cubic sums cancel: absolute error ~1e-6 of the inputs' size
    modes = {"bilinear": "MLRT_GRIDSAMPLE_LINEAR", "nearest": "MLRT_GRIDSAMPLE_NEAREST",
             "bicubic": "MLRT_GRIDSAMPLE_CUBIC"}
    spatial = (2, 2)

    def infer(self, inputs):
        x, grid = self.need(inputs, 0), self.need(inputs, 1)
        nd = x.rank - 2
        lo, hi = self.spatial
        if not lo <= nd <= hi:
            raise self.fail(f"X must have {lo}{f' to {hi}' if hi != lo else ''} spatial axes, got shape {x.shape}")
        if grid.rank != nd + 2 or grid.shape[0] != x.shape[0] or grid.shape[-1] != nd:
            raise self.fail(f"grid of shape {grid.shape} does not fit X of shape {x.shape}: expected "
                            f"({x.shape[0]}, out..., {nd}) with {nd} output axes")
        if np.dtype(grid.dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise self.fail(f"grid must be float or double, not {np.dtype(grid.dtype).name}")
        if self.a.mode not in self.modes:
            raise self.fail(f"mode '{self.a.mode}' is not one of {', '.join(self.modes)}")
        if self.a.padding_mode not in PADDING:
            raise self.fail(f"padding_mode '{self.a.padding_mode}' is not one of {', '.join(PADDING)}")
        return [Info(x.dtype, (x.shape[0], x.shape[1], *grid.shape[1:-1]))]

    def pack(self, inputs, outputs):
        return {"mode": enum_value(self.modes[self.a.mode]), "padding_mode": enum_value(PADDING[self.a.padding_mode]),
                "align_corners": int(bool(self.a.align_corners))}


class GridSample_20(GridSample_16):
    attributes = {"align_corners": 0, "mode": "linear", "padding_mode": "zeros"}
    modes = {"linear": "MLRT_GRIDSAMPLE_LINEAR", "nearest": "MLRT_GRIDSAMPLE_NEAREST", "cubic": "MLRT_GRIDSAMPLE_CUBIC"}
    spatial = (1, 6)
