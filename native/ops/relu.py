"""Relu: y = max(x, 0)."""

from ._elementwise import _Unary


class Relu(_Unary):
    pass
