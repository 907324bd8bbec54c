"""ReduceLogSum: log of the sum over the given axes (all by default), keeping them as size
1 if keepdims."""

from ._reduce import _Reduce, _ReduceAxesInput


class ReduceLogSum_1(_Reduce):
    """axes as an attribute."""


class ReduceLogSum_18(_ReduceAxesInput):
    """axes as an optional input; noop_with_empty_axes."""
