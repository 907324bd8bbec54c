"""Celu: y = max(0, x) + min(0, alpha * (e^(x / alpha) - 1))."""

from ._elementwise import _Activation


class Celu(_Activation):
    attributes = {"alpha": 1.0}
