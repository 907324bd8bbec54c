"""Log: y = ln x."""

from ._elementwise import _Unary


class Log(_Unary):
    pass
