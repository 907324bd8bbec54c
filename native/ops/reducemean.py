"""ReduceMean: the mean over the given axes (all by default), keeping them as size 1 if keepdims."""

from ._reduce import _Reduce, _ReduceAxesInput


class ReduceMean_1(_Reduce):
    """axes as an attribute."""


class ReduceMean_18(_ReduceAxesInput):
    """axes as an optional input; noop_with_empty_axes."""
