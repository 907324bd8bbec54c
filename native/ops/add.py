"""Add: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Add(_Broadcast):
    pass
