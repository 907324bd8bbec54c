"""HardSwish: y = x * max(0, min(1, x / 6 + 1/2))."""

from ._elementwise import _Activation


class HardSwish(_Activation):
    pass
