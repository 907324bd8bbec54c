"""Col2Im: sums the sliding blocks of input (N, C * prod(block_shape), L) back into
images (N, C, *image_shape) -- the inverse layout of im2col, overlaps added."""

import numpy as np

from ._base import Info, Op
from ._shape import ints


class Col2Im(Op):
    attributes = {"dilations": None, "pads": None, "strides": None}
    params = "mlrt_col2im_params"
    value_inputs = (1, 2)

    def geometry(self, inputs):
        x = self.need(inputs, 0)
        image, block = ints(self.value_of(inputs, 1)), ints(self.value_of(inputs, 2))
        nd = len(image)
        if not 1 <= nd <= 6 or len(block) != nd:
            raise self.fail(f"image_shape {image} and block_shape {block} must give 1 to 6 spatial axes alike")
        dil = ints(self.a.dilations) if self.a.dilations is not None else [1] * nd
        strides = ints(self.a.strides) if self.a.strides is not None else [1] * nd
        pads = ints(self.a.pads) if self.a.pads is not None else [0] * (2 * nd)
        if len(dil) != nd or len(strides) != nd or len(pads) != 2 * nd:
            raise self.fail(f"dilations {dil}, strides {strides} and pads {pads} do not fit {nd} spatial axes")
        if x.rank != 3:
            raise self.fail(f"input must be (N, C * prod(block_shape), L), got shape {x.shape}")
        if min(block) < 1 or min(dil) < 1 or min(strides) < 1 or min(image) < 0 or min(pads) < 0:
            raise self.fail(f"bad geometry: image {image}, block {block}, dilations {dil}, strides {strides}, "
                            f"pads {pads}")
        n_blocks = [(image[d] + pads[d] + pads[nd + d] - dil[d] * (block[d] - 1) - 1) // strides[d] + 1
                    for d in range(nd)]
        if min(n_blocks) < 1:
            raise self.fail(f"the image {image} holds no block {block} (blocks per axis {n_blocks})")
        k = int(np.prod(block))
        if x.shape[1] % k:
            raise self.fail(f"input dimension 1 ({x.shape[1]}) is not a multiple of prod(block_shape) = {k}")
        if x.shape[2] != int(np.prod(n_blocks)):
            raise self.fail(f"input dimension 2 ({x.shape[2]}) must be the number of blocks {n_blocks}")
        shape = (x.shape[0], x.shape[1] // k, *image)
        six = lambda v, fill: list(v) + [fill] * (6 - len(v))  # noqa: E731
        params = {"n_spatial": nd, "block": six(block, 1), "n_blocks": six(n_blocks, 1), "strides": six(strides, 1),
                  "dilations": six(dil, 1), "pads_begin": six(pads[:nd], 0)}
        return x, shape, params

    def infer(self, inputs):
        x, shape, _ = self.geometry(inputs)
        return [Info(x.dtype, shape)]

    def pack(self, inputs, outputs):
        return self.geometry(inputs)[2]
