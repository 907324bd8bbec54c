"""ReduceMin: the minimum (NaN wins; bool from opset 20) over the given axes (all by
default), keeping them as size 1 if keepdims."""

from ._reduce import _Reduce, _ReduceAxesInput


class ReduceMin_1(_Reduce):
    """axes as an attribute."""


class ReduceMin_18(_ReduceAxesInput):
    """axes as an optional input; noop_with_empty_axes."""
