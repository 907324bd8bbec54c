"""ConstantOfShape: a tensor of the given shape filled with one value (default float 0)."""

import numpy as np

from ._base import Info, Op
from ._shape import bits_of, ints


class ConstantOfShape(Op):
    attributes = {"value": None}
    params = "mlrt_constant_of_shape_params"
    value_inputs = (0,)

    def fill(self) -> np.ndarray:
        if self.a.value is None:
            return np.zeros(1, np.float32)
        value = np.asarray(self.a.value)
        if value.size != 1:
            raise self.fail(f"attribute 'value' must hold one element, not {value.size}")
        return value.reshape(1)

    # Outputs up to this many elements are made while planning (the value known, as shape
    # computations' are): folding one then needs no kernel call (ShuffleNet folds 243).
    KNOWN_MAX = 4096

    def infer(self, inputs):
        shape = tuple(ints(self.value_of(inputs, 0)))
        if any(d < 0 for d in shape):
            raise self.fail(f"shape {shape} has a negative dimension")
        if len(shape) > 32:  # (numpy's limit is 64 dimensions; no model needs a fraction of that)
            raise self.fail(f"shape has {len(shape)} dimensions, over the supported 32")
        fill = self.fill()
        out = Info(fill.dtype, shape)
        if out.size <= self.KNOWN_MAX:
            out.value = np.full(shape, fill[0], fill.dtype)
        return [out]

    def pack(self, inputs, outputs):
        value = self.fill()
        return {"value_bits": bits_of(value, value.dtype)}
