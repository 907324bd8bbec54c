"""HammingWindow: 25/46 - 21/46 cos(2 pi n / N) for n < size, with N = size (periodic,
the default) or size - 1 (symmetric), in the type output_datatype (default float32)."""

from .hannwindow import _Window


class HammingWindow(_Window):
    pass
