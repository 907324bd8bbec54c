"""CategoryMapper (ai.onnx.ml): strings -> int64 (default_int64 when absent) or int64 ->
strings (default_string) through the parallel lists cats_strings / cats_int64s; the
direction follows X's type.  Shape kept."""

import numpy as np

from ._host import strings
from ._ml import _MlHostOp


class CategoryMapper(_MlHostOp):
    attributes = {"cats_int64s": None, "cats_strings": None, "default_int64": -1, "default_string": "_Unused"}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        ints, strs = list(self.a.cats_int64s or []), list(self.a.cats_strings or [])
        if len(ints) != len(strs):
            raise self.fail(f"cats_int64s has {len(ints)} values, cats_strings {len(strs)}")
        if x.dtype.kind in "OUS":
            table = dict(zip(strs, ints))
            flat = [table.get(s, int(self.a.default_int64)) for s in strings(x).reshape(-1).tolist()]
            return [np.asarray(flat, dtype=np.int64).reshape(x.shape)]
        if x.dtype != np.int64:
            raise self.bad(f"X must be string or int64, got {x.dtype.name}")
        table = dict(zip(ints, strs))
        out = np.empty(x.size, dtype=object)
        out[:] = [table.get(v, self.a.default_string) for v in x.reshape(-1).tolist()]
        return [out.reshape(x.shape)]
