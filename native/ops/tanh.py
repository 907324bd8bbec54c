"""Tanh: y = tanh x."""

from ._elementwise import _Unary


class Tanh(_Unary):
    pass
