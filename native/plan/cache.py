"""Plans by input signature: made once for each set of input dtypes and shapes."""

from __future__ import annotations

import threading

import numpy as np

MAX_PLANS = 16  # signatures kept per partition; the oldest is dropped first
_ABSENT = object()


def signature(feeds: dict, names, by_value=frozenset()):
    """The key a plan is kept under: each fed tensor's name, dtype and shape -- and its
    bytes, for the names in `by_value` whose content the plan depends on; a string
    tensor, of whatever numpy dtype, by its shape alone.  None when a fed value is not a
    tensor (a sequence, an optional): no plan then."""
    key = []
    for name in names:
        v = feeds.get(name, _ABSENT)
        if v is _ABSENT:
            continue
        if type(v) is np.ndarray:  # the common case, kept quick: this runs on every run()
            dtype, shape = v.dtype, v.shape
        else:
            dtype = getattr(v, "dtype", None)
            if dtype is None or not hasattr(v, "shape"):
                return None
            dtype, shape = np.dtype(dtype), tuple(v.shape)
        if dtype.kind in "OUS":
            key.append((name, "string", shape))
            continue
        if name in by_value and type(v) is np.ndarray:
            key.append((name, dtype, shape, v.tobytes()))
        else:
            key.append((name, dtype, shape))
    return tuple(key)


class PlanCache:
    """At most MAX_PLANS plans by signature, shared by the threads that run a partition.
    Two threads meeting a new signature at once may both plan it; one plan is kept."""

    def __init__(self):
        self._plans: dict = {}
        self._lock = threading.Lock()

    def get(self, key, make, *args):
        """The plan for `key`, made by `make(*args)` the first time."""
        plan = self._plans.get(key)  # (a dict read is atomic: only changes take the lock)
        if plan is None:
            plan = make(*args)
            with self._lock:
                if key not in self._plans and len(self._plans) >= MAX_PLANS:
                    self._plans.pop(next(iter(self._plans)))
                self._plans[key] = plan
        return plan

    def values(self) -> list:
        with self._lock:
            return list(self._plans.values())

    def __len__(self) -> int:
        return len(self._plans)
