"""DynamicQuantizeLSTM (com.microsoft, as onnxruntime): LSTM whose W [dirs, input, 4H] and
R [dirs, H, 4H] are int8 / uint8 with W_scale / W_zero_point and R_scale / R_zero_point
per direction ([dirs]) or per output column ([dirs, 4H]); the rest (attributes, B,
sequence_lens, initial_h / initial_c, P, outputs) as LSTM.

mlrt dequantizes the constant weights once ((q - zero_point) * scale) and runs the float
LSTM kernel; onnxruntime also quantizes X and each step's H to uint8 before its integer
GEMMs, so the two agree within that quantization noise (`tolerance`).  W and R and
their scales / zero points must be constants of the model."""

import numpy as np

from ... import _errors
from ._base import Info, Launch
from ._quant import EIGHT_BIT, FLOAT, check_types, same_type
from .lstm import LSTM

_NAMES = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P", "W_scale", "W_zero_point", "R_scale",
          "R_zero_point")


class DynamicQuantizeLSTM(LSTM):
    domain = "com.microsoft"
    tolerance = (6e-2, 6e-2)  # onnxruntime's uint8 activations (steps of range / 255)

    def _float_view(self, inputs):
        """The LSTM inputs with W and R seen as float [dirs, 4H, input] / [dirs, 4H, H]."""
        for i in (0, 1, 2, 8, 9, 10, 11):
            self.need(inputs, i)
        x, w, r, ws, wz, rs, rz = (inputs[i] for i in (0, 1, 2, 8, 9, 10, 11))
        if np.dtype(x.dtype) != FLOAT:
            raise self.fail(f"X has type {np.dtype(x.dtype).name}, expected float32")
        check_types(self, [w, wz, r, rz], ("W", "W_zero_point", "R", "R_zero_point"), EIGHT_BIT)
        same_type(self, w, wz, "W and W_zero_point")
        same_type(self, r, rz, "R and R_zero_point")
        if w.rank != 3 or r.rank != 3:
            raise self.fail(f"W {tuple(w.shape)} and R {tuple(r.shape)} must be 3-D")
        for t, s, z, name in ((w, ws, wz, "W"), (r, rs, rz, "R")):
            per = {(t.shape[0],), (t.shape[0], t.shape[2])}
            if np.dtype(s.dtype) != FLOAT or tuple(s.shape) not in per or tuple(z.shape) != tuple(s.shape):
                raise self.fail(f"{name}_scale {tuple(s.shape)} ({np.dtype(s.dtype).name}) and {name}_zero_point "
                                f"{tuple(z.shape)} must be float32 / of {name}'s type, of shape [dirs] or [dirs, 4H]")
        floats = list(inputs[:8]) + [None] * (8 - len(inputs[:8]))
        floats[1] = Info(FLOAT, (w.shape[0], w.shape[2], w.shape[1]))
        floats[2] = Info(FLOAT, (r.shape[0], r.shape[2], r.shape[1]))
        return floats

    def infer(self, inputs):
        return super().infer(self._float_view(inputs))

    def _dequantized(self, inputs, q, s, z):
        arrays = []
        for i in (q, s, z):
            if inputs[i].value is None:
                raise _errors.NotImplemented(f"{self.where}: {_NAMES[i]} must be a constant of the model")
            arrays.append(np.asarray(inputs[i].value))
        qv, sv, zv = arrays
        sv = sv.reshape(sv.shape[0], 1, -1)
        zv = zv.reshape(zv.shape[0], 1, -1).astype(np.int32)
        w = ((qv.astype(np.int32) - zv).astype(np.float32) * sv).astype(np.float32)
        return np.ascontiguousarray(w.transpose(0, 2, 1))

    def pack(self, inputs, outputs):
        return super().pack(self._float_view(inputs), outputs)

    def launch(self, inputs, outputs):
        params = self.pack(inputs, outputs)
        extra = [self._dequantized(inputs, 1, 8, 9), self._dequantized(inputs, 2, 10, 11)]
        return Launch("DynamicQuantizeLSTM", params, extra=extra)
