"""BitShift: y = a << b or a >> b (direction "LEFT" / "RIGHT") with numpy
broadcasting.  ONNX lists unsigned integers; signed ones follow onnx.reference
(arithmetic right shift).  A shift outside [0, bit width) gives 0 (-1 for a right
shift of a negative value)."""

from ._elementwise import _Broadcast


class BitShift(_Broadcast):
    attributes = {"direction": None}
    params = "mlrt_bitshift_params"

    def pack(self, inputs, outputs):
        if self.a.direction not in ("LEFT", "RIGHT"):
            raise self.fail(f"direction must be 'LEFT' or 'RIGHT', not {self.a.direction!r}")
        return {"left": int(self.a.direction == "LEFT")}
