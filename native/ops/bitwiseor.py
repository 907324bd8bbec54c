"""BitwiseOr: y = a | b, elementwise with numpy broadcasting and the inputs' integer type."""

from ._elementwise import _Broadcast


class BitwiseOr(_Broadcast):
    pass
