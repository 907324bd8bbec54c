"""OneHotEncoder (ai.onnx.ml): Y = X.shape + [categories] float32, 1 where the element is
the category.  String inputs use cats_strings; int64, int32, float and double inputs
are cast to integers (truncated, as the spec says and onnxruntime does) and use
cats_int64s.  An element in no category gives a row of zeros (zeros=1) or an error
(zeros=0).  The C kernel (kernels/ml_string.c) looks each element up in the
categories, sorted once here; other integer types run in Python (run_host)."""

import numpy as np

from ..._errors import InvalidArgument
from ._base import Info, Launch
from ._host import strings
from ._ml import LOOKUP_NUMBERS, _MlOp, int_keys, is_strings, string_keys


class OneHotEncoder(_MlOp):
    attributes = {"cats_int64s": None, "cats_strings": None, "zeros": 1}
    params = "mlrt_ml_onehot_params"
    tolerance = (0.0, 0.0)

    def __init__(self, node, opset):
        super().__init__(node, opset)
        self._strs = string_keys(self.a.cats_strings) if self.a.cats_strings else None
        self._ints = int_keys(self.a.cats_int64s) if self.a.cats_int64s else None

    def takes(self, dtypes):
        x = dtypes[0] if dtypes else None
        if is_strings(x):
            return self._strs is not None
        return x is not None and np.dtype(x) in LOOKUP_NUMBERS and self._ints is not None

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if is_strings(x.dtype):
            if not self.a.cats_strings:
                raise self.fail("a string input needs 'cats_strings'")
            n = len(self.a.cats_strings)
        else:
            if np.dtype(x.dtype).kind not in "iuf":
                raise InvalidArgument(f"{self.where}: X must be string, int or float, got {np.dtype(x.dtype).name}")
            if not self.a.cats_int64s:
                raise self.fail("a numeric input needs 'cats_int64s'")
            n = len(self.a.cats_int64s)
        return [Info(np.dtype(np.float32), tuple(x.shape) + (n,))]

    def launch(self, inputs, outputs):
        keys, columns = self._strs if is_strings(inputs[0].dtype) else self._ints
        return Launch("OneHotEncoder", {"zeros": int(bool(self.a.zeros))}, extra=[keys, columns])

    def run_host(self, values, runtime):
        x = values[0] if values else None
        if not isinstance(x, np.ndarray):
            raise InvalidArgument(f"{self.where}: input 0 (X) must be a tensor, got {type(x).__name__}")
        ints, strs = self.a.cats_int64s, self.a.cats_strings
        if x.dtype.kind in "OUS":
            if not strs:
                raise self.fail("a string input needs 'cats_strings'")
            table = {s: i for i, s in enumerate(strs)}
            index = np.asarray([table.get(s, -1) for s in strings(x).reshape(-1).tolist()], dtype=np.int64)
            n = len(strs)
        else:
            if x.dtype.kind not in "iuf":
                raise InvalidArgument(f"{self.where}: X must be string, int or float, got {x.dtype.name}")
            if not ints:
                raise self.fail("a numeric input needs 'cats_int64s'")
            flat = x.reshape(-1)
            if x.dtype.kind == "f":
                ok = np.isfinite(flat) & (np.abs(flat) < 2.0 ** 63)
                flat = np.where(ok, np.trunc(np.where(ok, flat, 0)), 0).astype(np.int64)
            else:
                ok = np.ones(flat.shape, bool)
                flat = flat.astype(np.int64)
            uniq, slot = int_keys(ints)  # a repeated category: the last wins
            pos = np.clip(np.searchsorted(uniq, flat), 0, uniq.size - 1)
            index = np.where(ok & (uniq[pos] == flat), slot[pos], -1)
            n = len(ints)
        if not self.a.zeros and (index < 0).any():
            k = int(np.flatnonzero(index < 0)[0])
            raise InvalidArgument(f"{self.where}: element {k} of X ({x.reshape(-1)[k]!r}) is in no category and "
                                  "zeros=0")
        out = np.zeros((index.size, n), dtype=np.float32)
        hit = np.flatnonzero(index >= 0)
        out[hit, index[hit]] = 1.0
        return [out.reshape(tuple(x.shape) + (n,))]
