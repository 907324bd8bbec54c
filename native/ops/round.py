"""Round: y = x rounded to the nearest integer, halves to even."""

from ._elementwise import _Unary


class Round(_Unary):
    pass
