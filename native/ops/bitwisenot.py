"""BitwiseNot: y = ~x, elementwise on integers."""

from ._elementwise import _Unary


class BitwiseNot(_Unary):
    pass
