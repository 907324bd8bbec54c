"""BitwiseXor: y = a ^ b, elementwise with numpy broadcasting and the inputs' integer type."""

from ._elementwise import _Broadcast


class BitwiseXor(_Broadcast):
    pass
