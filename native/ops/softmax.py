"""Softmax: y = exp(x - max) / sum(exp(x - max)).

Before opset 13 the input is coerced to 2-D at axis (default 1) and each row is
normalised; from 13 the op runs along axis (default -1)."""

from ._reduce import _Softmax, _Softmax13


class Softmax_1(_Softmax):
    pass


class Softmax_13(_Softmax13):
    pass
