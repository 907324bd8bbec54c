"""LpPool: (sum of |x|^p over each window) ^ (1/p); padding counts as zero."""

from ._pool import _Pool


class LpPool(_Pool):
    attributes = {**_Pool.attributes, "p": 2}
    tolerance = (1e-4, 1e-5)

    def pack(self, inputs, outputs):
        if float(self.a.p) <= 0:
            raise self.fail(f"p must be positive, got {self.a.p}")
        return {**super().pack(inputs, outputs), "p": float(self.a.p)}
