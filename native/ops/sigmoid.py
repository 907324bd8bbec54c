"""Sigmoid: y = 1 / (1 + e^-x)."""

from ._elementwise import _Unary


class Sigmoid(_Unary):
    pass
