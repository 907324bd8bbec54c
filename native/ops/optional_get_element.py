"""OptionalGetElement: the value an optional holds (from opset 18 a plain tensor or
sequence passes through); an empty optional is an error."""

from ._host import _HostOp


class OptionalGetElement(_HostOp):
    def run_host(self, values, runtime):
        v = self.arg(values, 0)
        if v is None:
            raise self.bad("the optional input is empty")
        return [v]
