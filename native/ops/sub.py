"""Sub: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Sub(_Broadcast):
    pass
