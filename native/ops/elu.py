"""Elu: y = x if x > 0 else alpha * (e^x - 1)."""

from ._elementwise import _Activation


class Elu(_Activation):
    attributes = {"alpha": 1.0}
