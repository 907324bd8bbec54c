"""GlobalLpPool: (sum of |x|^p over each (image, channel) plane)^(1/p); Y is
(N, C, 1, ..., 1).  p is a float before opset 2, an int from it (default 2)."""

from ._pool import _GlobalPool


class GlobalLpPool(_GlobalPool):
    attributes = {"p": 2}
    params = "mlrt_global_lp_pool_params"
    tolerance = (1e-5, 1e-6)

    def pack(self, inputs, outputs):
        p = float(self.a.p)
        if not p > 0:
            raise self.fail(f"p must be positive, got {self.a.p}")
        x = inputs[0]
        planes = x.shape[0] * x.shape[1]
        return {"planes": planes, "size": x.size // planes if planes else 0, "p": p}
