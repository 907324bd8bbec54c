"""SplitToSequence: a tensor split along `axis` into a sequence.

`split` absent: pieces of size 1 (with `keepdims=0` the axis is dropped); a scalar:
pieces of that size, the last one smaller if the size does not divide; a 1-D
tensor: the size of each piece (they must add up to the axis length).
"""

import numpy as np

from ._base import normalize_axis
from ._host import _HostOp


class SplitToSequence(_HostOp):
    attributes = {"axis": 0, "keepdims": 1}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "input")
        if x.ndim == 0:
            raise self.bad("cannot split a scalar")
        axis = normalize_axis(self.a.axis, x.ndim, self.where)
        dim = x.shape[axis]
        split = self.arg(values, 1)
        if split is None:
            pieces = [np.take(x, i, axis=axis) if not self.a.keepdims else np.take(x, [i], axis=axis)
                      for i in range(dim)]
            return [pieces]
        split = np.asarray(split)
        if split.dtype.kind not in "iu" or split.ndim > 1:
            raise self.bad(f"split must be an integer scalar or 1-D tensor, got {split.dtype.name} {list(split.shape)}")
        if split.ndim == 0:
            size = int(split)
            if size <= 0:
                raise self.bad(f"split size {size} must be positive")
            sizes = [size] * (dim // size) + ([dim % size] if dim % size else [])
        else:
            sizes = [int(s) for s in split]
            if any(s < 0 for s in sizes) or sum(sizes) != dim:
                raise self.bad(f"split sizes {sizes} must be non-negative and add up to the axis length {dim}")
        bounds = np.cumsum([0] + sizes)
        index = [slice(None)] * x.ndim
        pieces = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            index[axis] = slice(int(lo), int(hi))
            pieces.append(np.array(x[tuple(index)], copy=True))
        return [pieces]
