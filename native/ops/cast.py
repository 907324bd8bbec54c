"""Cast: y = x converted to the element type `to` (a type name before opset 6).

numpy's astype rules (onnx.reference): floats round to nearest even, float ->
integer truncates, anything -> bool is "!= 0".  The float8 types, float4 and the 4-
and 2-bit integers follow ml_dtypes; `saturate` (opset 19) clamps out-of-range
values to a float8 type's largest finite value, `round_mode` (opset 24) rounds to
float8e8m0.  Strings are reported as not implemented."""

from onnx import TensorProto, helper

from ._base import REQUIRED
from ._elementwise import _Converting


class Cast(_Converting):
    attributes = {"to": REQUIRED, "saturate": 1, "round_mode": "up"}

    def infer(self, inputs):
        to = self.a.to
        if isinstance(to, str):  # opsets 1-5 name the type
            if to.upper() not in TensorProto.DataType.keys():
                raise self.fail(f"unknown type {to!r}")
            to = TensorProto.DataType.Value(to.upper())
        try:
            dtype = helper.tensor_dtype_to_np_dtype(int(to))
        except (KeyError, ValueError):
            raise self.fail(f"unknown type number {to}") from None
        return [self._converted(self.need(inputs, 0), dtype)]
