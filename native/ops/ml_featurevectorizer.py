"""FeatureVectorizer (ai.onnx.ml): its inputs side by side as one float32 [N, sum(dims)]
matrix.  Input i is read as [N, C_i] ([1, C_i] if 1-D; higher ranks flattened after
the first axis); its first inputdimensions[i] columns are taken, padded with zeros
when C_i is smaller (onnxruntime's reading; onnx.reference keeps the input type and
treats a 1-D input as a column)."""

import numpy as np

from ..._errors import NotImplemented
from ._base import Info
from ._ml import _MlOp

_MAX_INPUTS = 256  # the size of mlrt_ml_feature_vectorizer_params.dims


class FeatureVectorizer(_MlOp):
    attributes = {"inputdimensions": None}
    params = "mlrt_ml_feature_vectorizer_params"

    def infer(self, inputs):
        dims = list(self.a.inputdimensions or [])
        if len(dims) != len(inputs):
            raise self.fail(f"{len(inputs)} inputs but {len(dims)} inputdimensions")
        if len(inputs) > _MAX_INPUTS:
            raise NotImplemented(f"{self.where}: more than {_MAX_INPUTS} inputs")
        if any(d < 0 for d in dims):
            raise self.fail(f"inputdimensions must not be negative, got {dims}")
        rows = None
        for i in range(len(inputs)):
            x = self.features(inputs, i)
            if x.rank == 0:
                raise self.fail(f"input {i} must have rank >= 1")
            n = 1 if x.rank == 1 else x.shape[0]
            if rows is not None and n != rows:
                raise self.fail(f"input {i} has {n} rows, input 0 has {rows}")
            rows = n
        return [Info(np.dtype(np.float32), (rows, int(sum(dims))))]

    def pack(self, inputs, outputs):
        dims = [int(d) for d in self.a.inputdimensions]
        return {"n_inputs": len(dims), "dims": dims}
