"""LeakyRelu: y = x if x > 0 else alpha * x."""

from ._elementwise import _Activation


class LeakyRelu(_Activation):
    attributes = {"alpha": 0.01}
