"""Ceil: y = ceil(x)."""

from ._elementwise import _Unary


class Ceil(_Unary):
    pass
