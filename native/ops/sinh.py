"""Sinh: y = sinh x."""

from ._elementwise import _Unary


class Sinh(_Unary):
    pass
