"""Sqrt: y = sqrt(x)."""

from ._elementwise import _Unary


class Sqrt(_Unary):
    pass
