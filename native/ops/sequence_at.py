"""SequenceAt: the tensor at `position` (in [-n, n-1]) of a sequence."""

from ._host import _HostOp


class SequenceAt(_HostOp):
    def run_host(self, values, runtime):
        seq = self.sequence(values, 0)
        pos = self.position(self.tensor(values, 1, "position"), len(seq), "position")
        return [seq[pos]]
