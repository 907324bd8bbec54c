"""EyeLike: a 2-D tensor of the input's shape with ones on diagonal k (type: `dtype` or the input's)."""

import numpy as np
from onnx import helper

from ._base import Info, Op
from ._shape import bits_of


class EyeLike(Op):
    attributes = {"dtype": None, "k": 0}
    params = "mlrt_eye_like_params"

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank != 2:
            raise self.fail(f"input must be 2-D, not of shape {x.shape}")
        try:
            dtype = x.dtype if self.a.dtype is None else helper.tensor_dtype_to_np_dtype(int(self.a.dtype))
        except (KeyError, ValueError, TypeError):
            raise self.fail(f"dtype {self.a.dtype} is not a tensor element type") from None
        if np.dtype(dtype).kind not in "biuf":
            raise self.fail(f"dtype {np.dtype(dtype).name} is not a numeric element type EyeLike makes")
        return [Info(np.dtype(dtype), x.shape)]

    def pack(self, inputs, outputs):
        return {"k": int(self.a.k), "one_bits": bits_of(1, outputs[0].dtype)}
