"""Cosh: y = cosh x."""

from ._elementwise import _Unary


class Cosh(_Unary):
    pass
