"""QLinearMul (com.microsoft, as onnxruntime): C = saturate(round((A - A_zero_point) *
(B - B_zero_point) * (A_scale * B_scale / C_scale) + C_zero_point)).

Types, per-tensor scales and broadcasting as QLinearAdd; the multiplier and the product
in float, rounding half to even after adding C_zero_point: equal to onnxruntime's results
in the tests, one unit allowed."""

from .ms_qlinearadd import _QLinearBinary


class QLinearMul(_QLinearBinary):
    pass
