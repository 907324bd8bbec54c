"""ArgMin: int64 index of the smallest element along axis (the first one, or the last with
select_last_index; a NaN counts as the smallest)."""

from ._reduce import _ArgReduce


class ArgMin(_ArgReduce):
    pass
