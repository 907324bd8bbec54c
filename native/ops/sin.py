"""Sin: y = sin x."""

from ._elementwise import _Unary


class Sin(_Unary):
    pass
