"""Sum: elementwise, with numpy broadcasting."""

from ._elementwise import _Broadcast


class Sum(_Broadcast):
    pass
