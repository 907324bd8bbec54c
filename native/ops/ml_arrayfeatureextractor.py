"""ArrayFeatureExtractor (ai.onnx.ml): the columns of X (along its last axis) listed by
the int64 tensor Y, in that order: Z has shape X.shape[:-1] + [Y.size] ([1, Y.size]
for a 1-D X).  Indices must lie in [0, C); string tensors are gathered on the host."""

import numpy as np

from ..._errors import InvalidArgument
from ._base import Info
from ._ml import _MlOp


class ArrayFeatureExtractor(_MlOp):
    tolerance = (0.0, 0.0)

    def _shape(self, x_shape, k: int):
        if len(x_shape) == 0:
            raise self.fail("X must have rank >= 1")
        return (1, k) if len(x_shape) == 1 else tuple(x_shape[:-1]) + (k,)

    def infer(self, inputs):
        x, y = self.need(inputs, 0), self.need(inputs, 1)
        if np.dtype(y.dtype) != np.int64:
            raise self.fail(f"Y (the indices) must be int64, got {np.dtype(y.dtype).name}")
        return [Info(x.dtype, self._shape(x.shape, y.size))]

    def run_host(self, values, runtime):  # string X
        x, y = values[0], values[1]
        if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
            raise InvalidArgument(f"{self.where}: X and Y must be tensors")
        c = x.shape[-1] if x.ndim else 0
        idx = y.reshape(-1).astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= c):
            raise InvalidArgument(f"{self.where}: an index in Y is outside [0, {c})")
        return [np.ascontiguousarray(x[..., idx]).reshape(self._shape(x.shape, idx.size))]
