"""Atanh: y = artanh x."""

from ._elementwise import _Unary


class Atanh(_Unary):
    pass
