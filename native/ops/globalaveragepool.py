"""GlobalAveragePool: the mean of each (image, channel) plane."""

from ._pool import _GlobalPool


class GlobalAveragePool(_GlobalPool):
    pass
