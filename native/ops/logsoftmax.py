"""LogSoftmax: y = x - max - log(sum(exp(x - max))).

Before opset 13 the input is coerced to 2-D at axis (default 1) and each row is
normalised; from 13 the op runs along axis (default -1)."""

from ._reduce import _Softmax, _Softmax13


class LogSoftmax_1(_Softmax):
    pass


class LogSoftmax_13(_Softmax13):
    pass
