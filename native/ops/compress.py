"""Compress: the slices along `axis` (or the elements of the flattened input when no
axis is given) where the 1-D bool condition is true; a condition shorter than the
axis drops the slices past its end, entries past the axis are ignored.

A host op for now, because its output shape depends on the data; the C kernel
comes later.
"""

import numpy as np

from ._base import normalize_axis
from ._host import _HostTensorOp


class Compress(_HostTensorOp):
    attributes = {"axis": None}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "input")
        cond = self.tensor(values, 1, "condition")
        if cond.ndim != 1:
            raise self.bad(f"condition must be 1-D, got shape {list(cond.shape)}")
        if cond.dtype != np.bool_:
            raise self.bad(f"condition must be a bool tensor, got {cond.dtype.name}")
        if self.a.axis is None:
            x, axis = x.reshape(-1), 0
        else:
            if x.ndim == 0:
                raise self.bad("input must have rank >= 1 when an axis is given")
            axis = normalize_axis(self.a.axis, x.ndim, self.where)
        keep = np.flatnonzero(cond[:x.shape[axis]])
        return [np.take(x, keep, axis=axis)]
