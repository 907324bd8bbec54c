"""Mean: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Mean(_Broadcast):
    pass
