"""HardSigmoid: y = max(0, min(1, alpha * x + beta))."""

from ._elementwise import _Activation


class HardSigmoid(_Activation):
    attributes = {"alpha": 0.2, "beta": 0.5}
