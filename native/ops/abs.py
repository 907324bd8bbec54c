"""Abs: y = |x|."""

from ._elementwise import _Unary


class Abs(_Unary):
    pass
