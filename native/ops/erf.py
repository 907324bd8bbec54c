"""Erf: y = erf(x), the Gauss error function."""

from ._elementwise import _Unary


class Erf(_Unary):
    pass
