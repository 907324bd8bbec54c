"""AveragePool: the mean of each window, over the elements inside X or, with
count_include_pad, over the window clipped to the padded input."""

from ._pool import _Pool


class AveragePool(_Pool):
    attributes = {**_Pool.attributes, "count_include_pad": 0}

    def pack(self, inputs, outputs):
        return {**super().pack(inputs, outputs), "count_include_pad": int(self.a.count_include_pad)}
