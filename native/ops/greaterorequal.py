"""GreaterOrEqual: y = (a >= b), elementwise with numpy broadcasting and a bool result."""

from ._elementwise import _Compare


class GreaterOrEqual(_Compare):
    pass
