"""IsNaN: y = (x is NaN), a bool tensor of x's shape."""

from ._elementwise import _Predicate


class IsNaN(_Predicate):
    pass
