"""Acosh: y = arcosh x."""

from ._elementwise import _Unary


class Acosh(_Unary):
    pass
