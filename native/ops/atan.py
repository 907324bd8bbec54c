"""Atan: y = arctan x."""

from ._elementwise import _Unary


class Atan(_Unary):
    pass
