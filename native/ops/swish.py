"""Swish: y = x * sigmoid(alpha * x)."""

from ._elementwise import _Unary


class Swish(_Unary):
    attributes = {"alpha": 1.0}
    params = "mlrt_swish_params"

    def pack(self, inputs, outputs):
        return {"alpha": float(self.a.alpha)}
