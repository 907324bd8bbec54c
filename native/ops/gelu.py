"""Gelu: y = x/2 * (1 + erf(x / sqrt 2)), or with approximate="tanh"
x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""

from ._elementwise import _Activation

_MODES = {"none": 0, "tanh": 1}


class Gelu(_Activation):
    attributes = {"approximate": "none"}

    def pack(self, inputs, outputs):
        if self.a.approximate not in _MODES:
            raise self.fail(f"approximate must be 'none' or 'tanh', not {self.a.approximate!r}")
        return {"mode": _MODES[self.a.approximate]}
