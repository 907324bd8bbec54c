"""SequenceErase: a new sequence without the tensor at `position` (in [-n, n-1],
default: the last one)."""

from ._host import _HostOp


class SequenceErase(_HostOp):
    def run_host(self, values, runtime):
        seq = self.sequence(values, 0)
        pos = self.arg(values, 1)
        if pos is None:
            if not seq:
                raise self.bad("cannot erase from an empty sequence")
            at = len(seq) - 1
        else:
            at = self.position(pos, len(seq), "position")
        return [seq[:at] + seq[at + 1:]]
