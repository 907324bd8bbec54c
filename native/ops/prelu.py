"""PRelu: y = x if x > 0 else slope * x, slope broadcast to x.

As onnx.reference does (and opsets before 7 allowed), a 1-D slope that does not
broadcast lines up with the one dimension of x of its length."""

from ..._errors import InvalidModel
from ._base import Info, broadcast_shape
from ._elementwise import _Broadcast


class PRelu(_Broadcast):
    def _aligned(self, inputs):
        x, s = self.need(inputs, 0), self.need(inputs, 1)
        try:
            broadcast_shape(x.shape, s.shape, where=self.where)
            return inputs
        except InvalidModel:
            if s.rank != 1 or list(x.shape).count(s.shape[0]) != 1:
                raise
        k = list(x.shape).index(s.shape[0])
        shape = (s.shape[0],) + (1,) * (x.rank - k - 1)
        return [x, Info(s.dtype, shape, s.value.reshape(shape) if s.value is not None else None)]

    def infer(self, inputs):
        return super().infer(self._aligned(inputs))

    def launch(self, inputs, outputs):
        return super().launch(self._aligned(inputs), outputs)
