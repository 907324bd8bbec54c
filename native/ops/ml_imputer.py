"""Imputer (ai.onnx.ml): elements equal to the replaced value (replaced_value_float,
NaN meaning "is NaN", for float inputs; replaced_value_int64 for integer inputs) take
the imputed value of their feature (last axis; one value for all, or one per feature)."""

import math

import numpy as np

from ._base import Info
from ._ml import FEATURE_TYPES, _MlTableOp


class Imputer(_MlTableOp):
    attributes = {"imputed_value_floats": None, "imputed_value_int64s": None,
                  "replaced_value_float": 0.0, "replaced_value_int64": 0}
    params = "mlrt_ml_imputer_params"
    tolerance = (0.0, 0.0)

    def make_tables(self):
        return [np.asarray(self.a.imputed_value_floats or [], dtype=np.float64),
                np.asarray(self.a.imputed_value_int64s or [], dtype=np.int64)]

    def kernel_outputs(self, x):
        return [Info(x.dtype, x.shape)]

    def kernel_params(self, x):
        r = float(self.a.replaced_value_float)
        return {"replaced_value": 0.0 if math.isnan(r) else r, "replace_nan": int(math.isnan(r)),
                "replaced_int": int(self.a.replaced_value_int64)}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if x.dtype not in FEATURE_TYPES:
            raise self.bad(f"X must be float, double, int32 or int64, got {x.dtype.name}")
        floats, ints = self.tables
        table = floats if x.dtype.kind == "f" else ints
        if table.size == 0:
            kind = "imputed_value_floats" if x.dtype.kind == "f" else "imputed_value_int64s"
            raise self.fail(f"a {x.dtype.name} input needs '{kind}'")
        c = x.shape[-1] if x.ndim else 1
        if table.size not in (1, c):
            raise self.bad(f"{table.size} imputed values for {c} features (give 1 or {c})")
        return self.run_kernel(x, runtime, [table])
