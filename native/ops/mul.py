"""Mul: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Mul(_Broadcast):
    pass
