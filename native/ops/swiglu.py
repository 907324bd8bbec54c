"""SwiGLU: Y = Swish_alpha(A) * B = A * sigmoid(alpha * A) * B over two inputs of one
shape and float type (no broadcasting)."""

from ._base import Info, Op


class SwiGLU(Op):
    attributes = {"alpha": 1.0}
    params = "mlrt_swiglu_params"
    tolerance = (1e-5, 1e-6)

    def infer(self, inputs):
        a, b = self.need(inputs, 0), self.need(inputs, 1)
        if a.shape != b.shape or a.dtype != b.dtype:
            raise self.fail(f"A and B must have one shape and type (no broadcasting), got {a.dtype}{list(a.shape)} "
                            f"and {b.dtype}{list(b.shape)}")
        return [Info(a.dtype, a.shape)]

    def pack(self, inputs, outputs):
        return {"alpha": float(self.a.alpha)}
