"""LRN: local response normalisation across channels,
y = x / (bias + alpha / size * sum of squares over `size` neighbouring channels) ^ beta."""


from ._base import REQUIRED, Info, Op


class LRN(Op):
    attributes = {"alpha": 1e-4, "beta": 0.75, "bias": 1.0, "size": REQUIRED}
    params = "mlrt_lrn_params"
    tolerance = (1e-4, 1e-5)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank < 2:
            raise self.fail(f"X must have rank >= 2 (N, C, ...), got shape {x.shape}")
        if int(self.a.size) < 1:
            raise self.fail(f"size must be >= 1, got {self.a.size}")
        return [Info(x.dtype, x.shape)]

    def pack(self, inputs, outputs):
        return {"alpha": float(self.a.alpha), "beta": float(self.a.beta), "bias": float(self.a.bias),
                "size": int(self.a.size)}
