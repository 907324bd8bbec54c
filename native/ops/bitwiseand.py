"""BitwiseAnd: y = a & b, elementwise with numpy broadcasting and the inputs' integer type."""

from ._elementwise import _Broadcast


class BitwiseAnd(_Broadcast):
    pass
