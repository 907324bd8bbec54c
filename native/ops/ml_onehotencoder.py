"""OneHotEncoder (ai.onnx.ml): Y = X.shape + [categories] float32, 1 where the element is
the category.  String inputs use cats_strings; int64, int32, float and double inputs
are cast to integers (truncated, as the spec says and onnxruntime does) and use
cats_int64s.  An element in no category gives a row of zeros (zeros=1) or an error
(zeros=0)."""

import numpy as np

from ._host import strings
from ._ml import _MlHostOp


class OneHotEncoder(_MlHostOp):
    attributes = {"cats_int64s": None, "cats_strings": None, "zeros": 1}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        ints, strs = self.a.cats_int64s, self.a.cats_strings
        if x.dtype.kind in "OUS":
            if not strs:
                raise self.fail("a string input needs 'cats_strings'")
            table = {s: i for i, s in enumerate(strs)}
            index = np.asarray([table.get(s, -1) for s in strings(x).reshape(-1).tolist()], dtype=np.int64)
            n = len(strs)
        else:
            if x.dtype.kind not in "iuf":
                raise self.bad(f"X must be string, int or float, got {x.dtype.name}")
            if not ints:
                raise self.fail("a numeric input needs 'cats_int64s'")
            flat = x.reshape(-1)
            if x.dtype.kind == "f":
                ok = np.isfinite(flat) & (np.abs(flat) < 2.0 ** 63)
                flat = np.where(ok, np.trunc(np.where(ok, flat, 0)), 0).astype(np.int64)
            else:
                ok = np.ones(flat.shape, bool)
                flat = flat.astype(np.int64)
            cats = np.asarray(ints, dtype=np.int64)
            table = {int(c): i for i, c in enumerate(cats.tolist())}  # a repeated category: the last wins
            uniq = np.asarray(sorted(table), dtype=np.int64)
            slot = np.asarray([table[int(u)] for u in uniq], dtype=np.int64)
            pos = np.clip(np.searchsorted(uniq, flat), 0, uniq.size - 1)
            index = np.where(ok & (uniq[pos] == flat), slot[pos], -1)
            n = len(ints)
        if not self.a.zeros and (index < 0).any():
            k = int(np.flatnonzero(index < 0)[0])
            raise self.bad(f"element {k} of X ({x.reshape(-1)[k]!r}) is in no category and zeros=0")
        out = np.zeros((index.size, n), dtype=np.float32)
        hit = np.flatnonzero(index >= 0)
        out[hit, index[hit]] = 1.0
        return [out.reshape(tuple(x.shape) + (n,))]
