"""Floor: y = floor(x)."""

from ._elementwise import _Unary


class Floor(_Unary):
    pass
