"""NhwcMaxPool (com.microsoft, as onnxruntime): MaxPool on a channels-last int8 / uint8 X
(N, spatial..., C) giving Y (N, out..., C); MaxPool's attributes but storage_order and the
Indices output.  The C kernel moves X to channels first, runs MaxPool's kernel and moves
Y back: exact."""

from ._base import Info, Launch
from ._pool import _Pool
from ._quant import EIGHT_BIT, check_types
from .ms_nhwcconv import channels_first, channels_last


class NhwcMaxPool(_Pool):
    domain = "com.microsoft"
    tolerance = (0, 0)  # exact

    def _plan(self, inputs):
        x = self.need(inputs, 0)
        check_types(self, [x], ("X",), EIGHT_BIT)
        if x.rank < 3:
            raise self.fail(f"X must have rank >= 3 (N, spatial..., C), got shape {tuple(x.shape)}")
        shape, params = self.geometry([channels_first(x)])
        return channels_last(shape), params

    def infer(self, inputs):
        return [Info(inputs[0].dtype, self._plan(inputs)[0])]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, self._plan(inputs)[1])
