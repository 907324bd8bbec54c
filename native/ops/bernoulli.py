"""Bernoulli: 1 where a uniform draw falls below the input probability, else 0, in
`dtype` (any numeric type or bool; default the input's type).  Probabilities outside
[0, 1] act as clipped; NaN gives 0.  See RandomUniform for seeding."""

import numpy as np
from onnx import TensorProto, helper

from ._base import Info
from .randomuniform import _Random

OUTPUT_TYPES = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.BOOL,
                TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8,
                TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64)


class Bernoulli(_Random):
    attributes = {"dtype": None, "seed": None}

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
            raise self.fail(f"input must hold float probabilities, got {x.dtype}")
        if self.a.dtype is None:
            return [Info(x.dtype, x.shape)]
        if int(self.a.dtype) not in OUTPUT_TYPES:
            raise self.fail(f"dtype {self.a.dtype} is not a numeric or bool type")
        return [Info(np.dtype(helper.tensor_dtype_to_np_dtype(int(self.a.dtype))), x.shape)]
