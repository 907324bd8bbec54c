"""Asinh: y = arsinh x."""

from ._elementwise import _Unary


class Asinh(_Unary):
    pass
