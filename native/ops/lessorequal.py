"""LessOrEqual: y = (a <= b), elementwise with numpy broadcasting and a bool result."""

from ._elementwise import _Compare


class LessOrEqual(_Compare):
    pass
