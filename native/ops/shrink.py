"""Shrink: y = x + bias where x < -lambd, x - bias where x > lambd, else 0."""

from ._elementwise import _Unary


class Shrink(_Unary):
    attributes = {"bias": 0.0, "lambd": 0.5}
    params = "mlrt_shrink_params"

    def pack(self, inputs, outputs):
        return {"lambd": float(self.a.lambd), "bias": float(self.a.bias)}
