"""CategoryMapper (ai.onnx.ml): strings -> int64 (default_int64 when absent) or int64 ->
strings (default_string) through the parallel lists cats_strings / cats_int64s; the
direction follows X's type.  Shape kept.  Strings -> int64 runs on the C kernel
(kernels/ml_string.c, the keys sorted once here); int64 -> strings in Python."""

import numpy as np

from ._host import strings
from .ml_labelencoder import _Lookup


class CategoryMapper(_Lookup):
    attributes = {"cats_int64s": None, "cats_strings": None, "default_int64": -1, "default_string": "_Unused"}

    def __init__(self, node, opset):
        super().__init__(node, opset)
        ints, strs = list(self.a.cats_int64s or []), list(self.a.cats_strings or [])
        if len(ints) == len(strs):
            self.make_table(strs, np.asarray(ints, dtype=np.int64), int(self.a.default_int64))

    def _lists(self):
        ints, strs = list(self.a.cats_int64s or []), list(self.a.cats_strings or [])
        if len(ints) != len(strs):
            raise self.fail(f"cats_int64s has {len(ints)} values, cats_strings {len(strs)}")
        return ints, strs

    def out_dtype(self, x):
        self._lists()
        return self.strings_or_int64(x)

    def run_host(self, values, runtime):
        x = self.x_of(values)
        ints, strs = self._lists()
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
