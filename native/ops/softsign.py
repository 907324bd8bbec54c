"""Softsign: y = x / (1 + |x|)."""

from ._elementwise import _Unary


class Softsign(_Unary):
    pass
