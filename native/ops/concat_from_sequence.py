"""ConcatFromSequence: the tensors of a sequence joined along `axis` (`new_axis=1`:
stacked along a new axis, which may then be the last one, axis = rank)."""

import numpy as np

from ._base import REQUIRED, normalize_axis
from ._host import _HostOp


class ConcatFromSequence(_HostOp):
    attributes = {"axis": REQUIRED, "new_axis": 0}

    def run_host(self, values, runtime):
        seq = self.sequence(values, 0)
        if not seq:
            raise self.bad("cannot concatenate an empty sequence")
        self.same_dtype(seq, "the sequence's tensors")
        rank = seq[0].ndim
        new = bool(self.a.new_axis)
        axis = normalize_axis(self.a.axis, rank + 1 if new else rank, self.where)
        for k, t in enumerate(seq):
            if t.ndim != rank:
                raise self.bad(f"tensor {k} has rank {t.ndim}, tensor 0 rank {rank}")
            same = t.shape == seq[0].shape if new else all(
                a == b for d, (a, b) in enumerate(zip(t.shape, seq[0].shape)) if d != axis)
            if not same:
                raise self.bad(f"tensor {k} has shape {list(t.shape)}, tensor 0 {list(seq[0].shape)}: "
                               + ("stacking needs equal shapes" if new else f"only axis {axis} may differ"))
        return [np.stack(seq, axis=axis) if new else np.concatenate(seq, axis=axis)]
