"""Min: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Min(_Broadcast):
    pass
