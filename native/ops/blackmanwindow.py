"""BlackmanWindow: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N) for n < size, with
N = size (periodic, the default) or size - 1 (symmetric), in the type output_datatype
(default float32)."""

from .hannwindow import _Window


class BlackmanWindow(_Window):
    pass
