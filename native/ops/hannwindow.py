"""HannWindow: sin^2(pi n / N) for n < size, with N = size (periodic, the default) or
size - 1 (symmetric), in the type output_datatype (default float32).  A symmetric
window of one sample is [1] (the reference divides 0 by 0 there)."""

import numpy as np
from onnx import TensorProto, helper

from ._base import Info, Op
from .dft import scalar_int

OUTPUT_TYPES = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.INT8,
                TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8, TensorProto.UINT16,
                TensorProto.UINT32, TensorProto.UINT64)


def output_dtype(op: Op, code: int) -> np.dtype:
    if code not in OUTPUT_TYPES:
        raise op.fail(f"output_datatype {code} is not a numeric tensor type")
    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


class _Window(Op):
    attributes = {"output_datatype": TensorProto.FLOAT, "periodic": 1}
    params = "mlrt_window_params"
    value_inputs = (0,)

    def size(self, inputs) -> int:
        self.need(inputs, 0)
        n = scalar_int(self, self.value_of(inputs, 0), "size")
        if n < 0:
            raise self.fail(f"size must not be negative, got {n}")
        return n

    def infer(self, inputs):
        return [Info(output_dtype(self, int(self.a.output_datatype)), (self.size(inputs),))]

    def pack(self, inputs, outputs):
        return {"size": self.size(inputs), "periodic": int(bool(self.a.periodic))}


class HannWindow(_Window):
    pass
