"""RegexFullMatch: a bool tensor, true where the whole string matches `pattern`.

The pattern is RE2 syntax per the spec; Python's `re` runs it (a superset for the
common constructs)."""

import re

import numpy as np

from ._base import REQUIRED
from ._host import _HostTensorOp, strings


class RegexFullMatch(_HostTensorOp):
    attributes = {"pattern": REQUIRED}

    def __init__(self, node, opset):
        super().__init__(node, opset)
        try:
            self._regex = re.compile(self.a.pattern)
        except re.error as exc:
            raise self.fail(f"pattern {self.a.pattern!r} is not a valid regular expression: {exc}") from None

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if x.dtype.kind not in "OUS":
            raise self.bad(f"X must be a string tensor, got {x.dtype.name}")
        match = self._regex.fullmatch
        flat = [match(s) is not None for s in strings(x).reshape(-1)]
        return [np.array(flat, dtype=np.bool_).reshape(x.shape)]
