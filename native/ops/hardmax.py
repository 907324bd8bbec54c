"""Hardmax: y = 1 at the first maximum, 0 elsewhere.

Before opset 13 the input is coerced to 2-D at axis (default 1) and each row is
normalised; from 13 the op runs along axis (default -1)."""

from ._reduce import _Softmax, _Softmax13


class Hardmax_1(_Softmax):
    pass


class Hardmax_13(_Softmax13):
    pass
