"""DynamicQuantizeLinear: float x to uint8 with a scale and zero point computed from
x's range (widened to hold 0), all in float32 arithmetic as onnxruntime (and
onnx.reference, where the spec defines the result): scale = (max - min) / 255,
zero_point = round(clamp(-min / scale, 0, 255)), y = saturate(round(x / scale) + zero_point),
rounding half to even.  Where the spec leaves it open (docs/undefined.md), as onnxruntime:
an empty range (x all zero, or empty) has scale 1, NaN elements take no part in the
range and quantize to 0."""

import numpy as np

from ._base import Info, Op


class DynamicQuantizeLinear(Op):
    def infer(self, inputs):
        x = self.need(inputs, 0)
        if np.dtype(x.dtype) != np.float32:
            raise self.fail(f"x has type {np.dtype(x.dtype).name}, expected float32")
        outs = [Info(np.dtype(np.uint8), tuple(x.shape)), Info(np.dtype(np.float32), ()),
                Info(np.dtype(np.uint8), ())]
        return outs[:max(1, len(self.node.output))]
