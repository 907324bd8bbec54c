"""BitCast: the input's bytes reinterpreted as the type `to`, which must have the
same size; the shape is kept.  Strings are refused."""

import numpy as np
from onnx import TensorProto, helper

from ._base import REQUIRED, Info, Op


class BitCast(Op):
    attributes = {"to": REQUIRED}
    tolerance = (0.0, 0.0)

    def infer(self, inputs):
        x = self.need(inputs, 0)
        to = int(self.a.to)
        if to == TensorProto.STRING or x.dtype.kind in "OUS":
            raise self.fail("cannot bit-cast strings")
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(to))
        except (KeyError, ValueError, TypeError):
            raise self.fail(f"'to' = {to} is not a tensor element type") from None
        if dtype.itemsize != x.dtype.itemsize:
            raise self.fail(f"{x.dtype} ({x.dtype.itemsize * 8} bits) and {dtype} ({dtype.itemsize * 8} bits) "
                            "differ in width; BitCast needs types of the same width")
        return [Info(dtype, x.shape)]
