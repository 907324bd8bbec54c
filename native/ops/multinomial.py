"""Multinomial: for each row of input [batch, classes] (unnormalised log-probabilities),
sample_size class indices drawn from softmax(row), as `dtype` (int32, the default,
or int64).  See RandomUniform for seeding."""

import numpy as np
from onnx import TensorProto

from ._base import Info
from .randomuniform import _Random


class Multinomial(_Random):
    attributes = {"dtype": TensorProto.INT32, "sample_size": 1, "seed": None}

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank != 2 or (x.dtype.kind != "f" and x.dtype.name != "bfloat16"):
            raise self.fail(f"input must be a [batch, classes] float tensor, got {x.dtype} of shape {list(x.shape)}")
        if int(self.a.dtype) not in (TensorProto.INT32, TensorProto.INT64):
            raise self.fail(f"dtype must be int32 (6) or int64 (7), got {self.a.dtype}")
        if int(self.a.sample_size) < 0:
            raise self.fail(f"sample_size must not be negative, got {self.a.sample_size}")
        dtype = np.int32 if int(self.a.dtype) == TensorProto.INT32 else np.int64
        return [Info(np.dtype(dtype), (x.shape[0], int(self.a.sample_size)))]

    def distribution(self):
        return {"sample_size": int(self.a.sample_size)}
