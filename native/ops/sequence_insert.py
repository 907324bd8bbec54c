"""SequenceInsert: a new sequence with a tensor inserted at `position` (in [-n, n],
default: at the end); the tensor must have the sequence's element type."""

from ._host import _HostOp


class SequenceInsert(_HostOp):
    def run_host(self, values, runtime):
        seq = self.sequence(values, 0)
        t = self.tensor(values, 1, "tensor")
        if seq:
            self.same_dtype([seq[0], t], "the sequence and the inserted tensor")
        pos = self.arg(values, 2)
        at = len(seq) if pos is None else self.position(pos, len(seq), "position", inclusive_end=True)
        return [seq[:at] + [t] + seq[at:]]
