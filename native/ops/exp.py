"""Exp: y = e^x."""

from ._elementwise import _Unary


class Exp(_Unary):
    pass
