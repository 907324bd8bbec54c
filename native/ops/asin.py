"""Asin: y = arcsin x."""

from ._elementwise import _Unary


class Asin(_Unary):
    pass
