"""Sign: y = -1, 0 or 1 by the sign of x (NaN stays NaN)."""

from ._elementwise import _Unary


class Sign(_Unary):
    pass
