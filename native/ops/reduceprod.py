"""ReduceProd: the product over the given axes (all by default), keeping them as size 1 if
keepdims."""

from ._reduce import _Reduce, _ReduceAxesInput


class ReduceProd_1(_Reduce):
    """axes as an attribute."""


class ReduceProd_18(_ReduceAxesInput):
    """axes as an optional input; noop_with_empty_axes."""
