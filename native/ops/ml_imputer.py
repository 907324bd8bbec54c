"""Imputer (ai.onnx.ml): elements equal to the replaced value (replaced_value_float,
NaN meaning "is NaN", for float inputs; replaced_value_int64 for integer inputs) take
the imputed value of their feature (last axis; one value for all, or one per feature)."""

import math

import numpy as np

from ._base import Info
from ._ml import _MlTableOp


class Imputer(_MlTableOp):
    attributes = {"imputed_value_floats": None, "imputed_value_int64s": None,
                  "replaced_value_float": 0.0, "replaced_value_int64": 0}
    params = "mlrt_ml_imputer_params"
    tolerance = (0.0, 0.0)
    ranks = None

    def make_tables(self):
        return [np.asarray(self.a.imputed_value_floats or [], dtype=np.float64),
                np.asarray(self.a.imputed_value_int64s or [], dtype=np.int64)]

    def kernel_tables(self, x):
        return [self.tables[0] if np.dtype(x.dtype).kind == "f" else self.tables[1]]

    def outputs_for(self, x):
        (table,) = self.kernel_tables(x)
        if table.size == 0:
            kind = "imputed_value_floats" if np.dtype(x.dtype).kind == "f" else "imputed_value_int64s"
            raise self.fail(f"a {np.dtype(x.dtype).name} input needs '{kind}'")
        c = x.shape[-1] if x.rank else 1
        if table.size not in (1, c):
            raise self.fail(f"{table.size} imputed values for {c} features (give 1 or {c})")
        return [Info(x.dtype, x.shape)]

    def kernel_params(self, x):
        r = float(self.a.replaced_value_float)
        return {"replaced_value": 0.0 if math.isnan(r) else r, "replace_nan": int(math.isnan(r)),
                "replaced_int": int(self.a.replaced_value_int64)}
