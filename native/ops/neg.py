"""Neg: y = -x."""

from ._elementwise import _Unary


class Neg(_Unary):
    pass
