"""MaxRoiPool: max pooling of X [N, C, H, W] over regions rois [R, 5] = [batch, x1, y1,
x2, y2] (scaled by spatial_scale, rounded to pixels, ends inclusive), each split into
pooled_shape = (h, w) bins; Y is [R, C, h, w], 0 for an empty bin.  onnx.reference
has no MaxRoiPool; this follows the Caffe/onnxruntime definition."""

from ._base import REQUIRED, Info, Op


class MaxRoiPool(Op):
    attributes = {"pooled_shape": REQUIRED, "spatial_scale": 1.0}
    params = "mlrt_max_roi_pool_params"

    def resolve(self, inputs):
        x, rois = self.need(inputs, 0), self.need(inputs, 1)
        if x.rank != 4:
            raise self.fail(f"X must be [N, C, H, W], got shape {list(x.shape)}")
        if rois.rank != 2 or rois.shape[1] != 5:
            raise self.fail(f"rois must be [num_rois, 5], got shape {list(rois.shape)}")
        if rois.dtype != x.dtype:
            raise self.fail(f"rois must have X's type {x.dtype}, got {rois.dtype}")
        shape = list(self.a.pooled_shape)
        if len(shape) != 2 or min(shape) < 1:
            raise self.fail(f"pooled_shape must be two positive ints, got {shape}")
        return x, rois, shape

    def infer(self, inputs):
        x, rois, (h, w) = self.resolve(inputs)
        return [Info(x.dtype, (rois.shape[0], x.shape[1], h, w))]

    def pack(self, inputs, outputs):
        _, _, (h, w) = self.resolve(inputs)
        return {"pooled_h": h, "pooled_w": w, "spatial_scale": float(self.a.spatial_scale)}
