"""Div: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Div(_Broadcast):
    pass
