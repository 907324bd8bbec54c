"""SequenceConstruct: a sequence of the input tensors, which share one element type."""

from ._host import _HostOp


class SequenceConstruct(_HostOp):
    def run_host(self, values, runtime):
        items = [self.tensor(values, i) for i in range(len(values))]
        if not items:
            raise self.fail("needs at least one input")
        self.same_dtype(items, "the inputs")
        return [items]
