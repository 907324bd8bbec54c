"""Tan: y = tan x."""

from ._elementwise import _Unary


class Tan(_Unary):
    pass
