"""Not: y = not x, elementwise on bool."""

from ._elementwise import _Unary


class Not(_Unary):
    pass
