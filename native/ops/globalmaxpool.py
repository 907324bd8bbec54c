"""GlobalMaxPool: the largest element of each (image, channel) plane."""

from ._pool import _GlobalPool


class GlobalMaxPool(_GlobalPool):
    pass
