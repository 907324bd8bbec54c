"""Acos: y = arccos x."""

from ._elementwise import _Unary


class Acos(_Unary):
    pass
