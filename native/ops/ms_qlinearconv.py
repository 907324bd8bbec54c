"""QLinearConv (com.microsoft, as onnxruntime): ai.onnx QLinearConv plus `channels_last`:
when 1, x is (N, spatial..., C) and y (N, out..., M); w stays (M, C / group, kernel...).

onnxruntime registers it for (x, w) uint8 / uint8, uint8 / int8 and int8 / int8; mlrt
takes what its QLinearConv takes.  The C kernel moves x to channels first, runs the
QLinearConv kernel and moves y back, so rounding is QLinearConv's, which is
onnxruntime's (float32 requantization, docs/undefined.md): equal to onnxruntime."""

import numpy as np

from ._base import Info, Launch
from .ms_nhwcconv import channels_first, channels_last
from .qlinearconv import QLinearConv as _OnnxQLinearConv


class QLinearConv(_OnnxQLinearConv):
    domain = "com.microsoft"
    attributes = {**_OnnxQLinearConv.attributes, "channels_last": 0}
    tolerance = (0, 0)  # exact (rtol, atol in units of the quantized type)

    def geometry(self, inputs):
        if self.a.channels_last and inputs and inputs[0] is not None:
            inputs = [channels_first(inputs[0])] + list(inputs[1:])
        return super().geometry(inputs)

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        y_z = inputs[7] if len(inputs) > 7 else None
        shape = channels_last(shape) if self.a.channels_last else tuple(shape)
        return [Info(np.dtype(y_z.dtype if y_z is not None else inputs[0].dtype), shape)]

    def launch(self, inputs, outputs):
        kernel = "QLinearConvChannelsLast" if self.a.channels_last else "QLinearConv"
        return Launch(kernel, self.geometry(inputs)[1])
