"""Reciprocal: y = 1 / x."""

from ._elementwise import _Unary


class Reciprocal(_Unary):
    pass
