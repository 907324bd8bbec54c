"""Selu: y = gamma * (x if x > 0 else alpha * (e^x - 1))."""

from ._elementwise import _Activation


class Selu(_Activation):
    attributes = {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}
