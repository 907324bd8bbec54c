"""Gelu: y = x/2 * (1 + erf(x / sqrt 2)), or with approximate="tanh"
x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""

from .._lib import enum_value
from ._elementwise import _Activation

# approximate -> the constants of kernels/activation.h (the numbers live there)
MODES = {"none": "MLRT_GELU_NONE", "tanh": "MLRT_GELU_TANH"}


class Gelu(_Activation):
    attributes = {"approximate": "none"}

    def pack(self, inputs, outputs):
        if self.a.approximate not in MODES:
            raise self.fail(f"approximate must be 'none' or 'tanh', not {self.a.approximate!r}")
        return {"mode": enum_value(MODES[self.a.approximate])}
