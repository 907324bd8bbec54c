"""LinearRegressor (ai.onnx.ml): Y[N, targets] = X . coefficients^T + intercepts as float32,
then the post transform (applied to each row; onnx.reference knows only NONE)."""

import numpy as np

from ._base import REQUIRED, Info
from ._ml import _MlTableOp, rows


class LinearRegressor(_MlTableOp):
    attributes = {"coefficients": REQUIRED, "intercepts": None, "targets": 1, "post_transform": "NONE"}
    params = "mlrt_ml_linear_regressor_params"
    array_attributes = frozenset({"coefficients"})  # large FLOATS: read at once as arrays

    def make_tables(self):
        coef = np.asarray(self.a.coefficients, dtype=np.float64)
        t = int(self.a.targets)
        if t < 1 or coef.size % t:
            raise self.fail(f"{coef.size} coefficients do not split into {t} targets")
        b = np.asarray(self.a.intercepts or [], dtype=np.float64)
        if b.size not in (0, t):
            raise self.fail(f"{b.size} intercepts for {t} targets")
        return [coef.reshape(t, -1), b]

    def outputs_for(self, x):
        return [Info(np.dtype(np.float32), (rows(x), int(self.a.targets)))]

    def kernel_params(self, x):
        return {"post_transform": self.transform()}
