"""Optional: an optional value holding the input (a tensor or a sequence), or an
empty optional when the input is absent (its `type` attribute gives the type)."""

from ._host import _HostOp


class Optional(_HostOp):
    attributes = {"type": None}

    def run_host(self, values, runtime):
        v = self.arg(values, 0)
        if v is None and self.a.type is None:
            raise self.fail("an empty Optional needs the 'type' attribute")
        return [v]
