"""StringNormalizer: drop the elements equal to a stopword (compared ignoring case
unless `is_case_sensitive`), then change case (`case_change_action` LOWER, UPPER or
NONE).  Input [C] or [1, C]; if every element is dropped the result is one empty
string, of shape [1] or [1, 1].  Case rules are Unicode's (Python's str.lower/upper);
`locale` is accepted but not used.
"""

import numpy as np

from ._host import _HostTensorOp, strings


class StringNormalizer(_HostTensorOp):
    attributes = {"case_change_action": "NONE", "is_case_sensitive": 0, "locale": "", "stopwords": None}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if x.dtype.kind not in "OUS":
            raise self.bad(f"X must be a string tensor, got {x.dtype.name}")
        if not (x.ndim == 1 or x.ndim == 2 and x.shape[0] == 1):
            raise self.bad(f"X must have shape [C] or [1, C], got {list(x.shape)}")
        action = self.a.case_change_action
        change = {"NONE": lambda s: s, "LOWER": str.lower, "UPPER": str.upper}.get(action)
        if change is None:
            raise self.fail(f"case_change_action must be NONE, LOWER or UPPER, got {action!r}")
        stops = list(self.a.stopwords or [])
        if self.a.is_case_sensitive:
            stop_set, key = set(stops), (lambda s: s)
        else:
            stop_set, key = {w.lower() for w in stops}, str.lower
        kept = [change(s) for s in strings(x).reshape(-1) if key(s) not in stop_set]
        if not kept:
            kept = [""]
        out = np.empty(len(kept), dtype=object)
        out[:] = kept
        return [out.reshape(1, -1) if x.ndim == 2 else out]
