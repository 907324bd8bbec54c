"""SequenceEmpty: an empty sequence (the `dtype` attribute names its element type)."""

from ._host import _HostOp


class SequenceEmpty(_HostOp):
    attributes = {"dtype": 1}

    def run_host(self, values, runtime):
        return [[]]
