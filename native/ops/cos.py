"""Cos: y = cos x."""

from ._elementwise import _Unary


class Cos(_Unary):
    pass
