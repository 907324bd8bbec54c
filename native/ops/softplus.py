"""Softplus: y = ln(1 + e^x)."""

from ._elementwise import _Unary


class Softplus(_Unary):
    pass
