"""Max: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Max(_Broadcast):
    pass
