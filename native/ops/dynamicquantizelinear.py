"""DynamicQuantizeLinear: float x to uint8 with a scale and zero point computed from
x's range (widened to hold 0), all in float32 arithmetic like onnx.reference:
scale = (max - min) / 255 (1 / 255 when the range is empty),
zero_point = round(clamp(-min / scale, 0, 255)), y = saturate(round(x / scale) + zero_point)."""

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
