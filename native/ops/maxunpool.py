"""MaxUnpool: zeros with each X element put back where its MaxPool index (flat, over
(N, C, spatial...)) says.  The unpooled size per axis is
(in - 1) * stride - pad_begin - pad_end + kernel; an `output_shape` input gives a
larger output that the unpooled tensor fills from its origin, as onnx.reference does."""

import numpy as np

from ._base import REQUIRED, Info, Op
from ._shape import ints


class MaxUnpool(Op):
    attributes = {"kernel_shape": REQUIRED, "pads": None, "strides": None}
    params = "mlrt_maxunpool_params"
    value_inputs = (2,)

    def geometry(self, inputs):
        x, ind = self.need(inputs, 0), self.need(inputs, 1)
        nd = x.rank - 2
        if not 1 <= nd <= 6:
            raise self.fail(f"X must be (N, C, spatial...) with 1 to 6 spatial axes, got shape {x.shape}")
        if tuple(ind.shape) != tuple(x.shape):
            raise self.fail(f"indices of shape {ind.shape} must have X's shape {x.shape}")
        if np.dtype(ind.dtype) != np.dtype(np.int64):
            raise self.fail(f"indices must be int64, not {np.dtype(ind.dtype).name}")
        kernel = ints(self.a.kernel_shape)
        strides = ints(self.a.strides) if self.a.strides is not None else [1] * nd
        pads = ints(self.a.pads) if self.a.pads is not None else [0] * (2 * nd)
        if len(kernel) != nd or len(strides) != nd or len(pads) != 2 * nd:
            raise self.fail(f"kernel_shape {kernel}, strides {strides} and pads {pads} do not fit {nd} spatial axes")
        inferred = [(x.shape[d + 2] - 1) * strides[d] - pads[d] - pads[nd + d] + kernel[d] for d in range(nd)]
        if min(inferred) < 0:
            raise self.fail(f"the unpooled shape {inferred} is negative")
        shape = (x.shape[0], x.shape[1], *inferred)
        given = self.value_of(inputs, 2)
        if given is not None and np.asarray(given).size:
            given = tuple(ints(given))
            if len(given) != x.rank or given[:2] != tuple(x.shape[:2]) or min(given) < 0:
                raise self.fail(f"output_shape {list(given)} must be (N, C, spatial...) = "
                                f"({x.shape[0]}, {x.shape[1]}, ...)")
            shape = given
        return x, shape, {"n_spatial": nd, "inferred": inferred}

    def infer(self, inputs):
        x, shape, _ = self.geometry(inputs)
        return [Info(x.dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        return self.geometry(inputs)[2]
