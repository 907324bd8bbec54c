"""ArgMax: int64 index of the largest element along axis (the first one, or the last with
select_last_index; a NaN counts as the largest)."""

from ._reduce import _ArgReduce


class ArgMax(_ArgReduce):
    pass
