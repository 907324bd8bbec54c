"""OptionalHasElement: a bool scalar, true if the input optional holds a value
(a plain tensor or sequence counts as present; from opset 18 the input may be
omitted, which counts as empty)."""

import numpy as np

from ._host import _HostOp


class OptionalHasElement(_HostOp):
    def run_host(self, values, runtime):
        return [np.array(self.arg(values, 0) is not None)]
