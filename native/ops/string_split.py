"""StringSplit: split each string by `delimiter` into at most `maxsplit`+1 pieces.

With no (or an empty) delimiter, runs of whitespace separate and leading/trailing
whitespace is dropped; with one, consecutive delimiters give empty strings.
Outputs: Y of shape X.shape + [most pieces], padded with "", and Z (int64, X's
shape), the number of pieces of each string.
"""

import numpy as np

from ._host import _HostTensorOp, strings


class StringSplit(_HostTensorOp):
    attributes = {"delimiter": None, "maxsplit": None}

    def run_host(self, values, runtime):
        x = self.tensor(values, 0, "X")
        if x.dtype.kind not in "OUS":
            raise self.bad(f"X must be a string tensor, got {x.dtype.name}")
        sep = self.a.delimiter or None
        maxsplit = -1 if self.a.maxsplit is None else int(self.a.maxsplit)
        parts = [s.split(sep, maxsplit) for s in strings(x).reshape(-1)]
        width = max((len(p) for p in parts), default=0)
        y = np.full((len(parts), width), "", dtype=object)
        for i, p in enumerate(parts):
            y[i, :len(p)] = p
        z = np.array([len(p) for p in parts], dtype=np.int64).reshape(x.shape)
        return [y.reshape(x.shape + (width,)), z]
