"""FusedConvMaxPool (com.microsoft domain, mlrt's own: onnxruntime has no such operator):
MaxPool(FusedConv(X, W, B)), 2-D, the pool with unit dilations and no Indices.

What native/optimizer/fuse_conv_maxpool.py makes of a network's first conv (its
activation fused) and the MaxPool after it, so the conv's output, the largest tensor of
such networks, is pooled a few rows at a time while they are in cache instead of being
written out whole and read back.  Inputs: FusedConv's without Z.  Attributes: FusedConv's,
and the MaxPool's as pool_kernel_shape, pool_strides, pool_pads (begins then ends),
pool_ceil_mode; the pool's auto_pad is resolved into pool_pads by the pass.  The same
values as the two nodes (max is exact)."""

from ._conv import per_dim, window_geometry
from .fusedconv import FusedConv


class FusedConvMaxPool(FusedConv):
    attributes = {**FusedConv.attributes, "pool_kernel_shape": None, "pool_strides": None, "pool_pads": None,
                  "pool_ceil_mode": 0}

    def geometry(self, inputs):
        if len(inputs) > 3 and inputs[3] is not None:
            raise self.fail("takes no Z (input 3)")
        shape, params = super().geometry(inputs)
        if len(shape) != 4:
            raise self.fail(f"2-D only: the conv's output has shape {tuple(shape)}")
        if not self.a.pool_kernel_shape:
            raise self.fail("pool_kernel_shape is required")
        kernel = per_dim(self, "pool_kernel_shape", self.a.pool_kernel_shape, 2, 1, 1)
        strides = per_dim(self, "pool_strides", self.a.pool_strides, 2, 1, 1)
        out, begin, _ = window_geometry(self, shape[2:], kernel, strides, [1, 1], self.a.pool_pads, "NOTSET",
                                        bool(self.a.pool_ceil_mode))
        if any(b >= k for b, k in zip(begin, kernel)):
            raise self.fail(f"pool_pads {list(begin)} must be smaller than the window {list(kernel)}")
        return (*shape[:2], *out), {**params, "pool": 1, "pool_kernel": kernel, "pool_strides": strides,
                                    "pool_pads_begin": begin}
