"""Unique: the distinct elements (no axis: of the flattened input) or distinct slices
along `axis`, sorted (`sorted=1`) or in order of first occurrence, with
`indices` (first occurrence of each), `inverse_indices` (for each input element or
slice, where it went) and `counts`, all int64.

A host op for now, because its output shape depends on the data; the C kernel
comes later.
"""

import numpy as np

from ._base import normalize_axis
from ._host import _HostTensorOp, strings


def _unique_rows(rows: np.ndarray):
    """np.unique(rows, axis=0)'s index outputs for any dtype (strings included)."""
    if rows.dtype != object:
        _, first, inverse, counts = np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                              return_counts=True)
        return first, inverse.reshape(-1), counts
    keys = [tuple(r) for r in rows]
    seen: dict = {}
    for i, k in enumerate(keys):
        seen.setdefault(k, i)
    order = sorted(seen)
    slot = {k: j for j, k in enumerate(order)}
    first = np.array([seen[k] for k in order], dtype=np.int64)
    inverse = np.array([slot[k] for k in keys], dtype=np.int64)
    counts = np.bincount(inverse, minlength=len(order))
    return first, inverse, counts


class Unique(_HostTensorOp):
    attributes = {"axis": None, "sorted": 1}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if x.dtype == object:
            x = strings(x)  # one comparable type (str) for sorting
        if self.a.axis is None:
            flat = x.reshape(-1)
            _, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True, return_counts=True)
            inverse = inverse.reshape(-1)
            source, axis = flat, 0
        else:
            if x.ndim == 0:
                raise self.bad("input must have rank >= 1 when an axis is given")
            axis = normalize_axis(self.a.axis, x.ndim, self.where)
            rows = np.moveaxis(x, axis, 0)
            rows = rows.reshape(x.shape[axis], int(np.prod(rows.shape[1:], dtype=np.int64)))  # (-1 fails when empty)
            first, inverse, counts = _unique_rows(rows)
            source = x
        if not self.a.sorted:  # order of first occurrence
            order = np.argsort(first, kind="stable")
            where = np.empty_like(order)
            where[order] = np.arange(order.size)
            first, counts, inverse = first[order], counts[order], where[inverse]
        y = np.take(source, first, axis=axis)
        as64 = lambda a: np.asarray(a, dtype=np.int64)  # noqa: E731
        return [y, as64(first), as64(inverse), as64(counts)]
