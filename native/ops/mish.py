"""Mish: y = x * tanh(ln(1 + e^x))."""

from ._elementwise import _Activation


class Mish(_Activation):
    pass
