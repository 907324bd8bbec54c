"""DFT: the discrete Fourier transform along one axis of a real ([..., 1]) or complex
([..., 2]) signal.  Forward, or inverse (scaled by 1/n); full, or one-sided: RFFT
keeps the first n/2 + 1 bins, IRFFT rebuilds a real signal ([..., 1]) from them.
Each line is cut or zero-padded to dft_length (input 1; by default the axis length,
or 2 * (axis length - 1) for IRFFT).  Opset 17 takes the axis as an attribute
(default 1), opset 20 as input 2 (default -2); the last dim is never the axis."""

import numpy as np

from ._base import Info, Op


def scalar_int(op: Op, value, what: str) -> int:
    a = np.asarray(value)
    if a.size != 1 or a.ndim > 1 or a.dtype.kind not in "iu":
        raise op.fail(f"{what} must be an integer scalar, not a {a.dtype.name} tensor of shape {list(a.shape)}")
    return int(a.reshape(-1)[0])


class DFT_17(Op):
    attributes = {"axis": 1, "inverse": 0, "onesided": 0}
    params = "mlrt_dft_params"
    value_inputs = (1,)
    kernel = "DFT"
    tolerance = (1e-5, 1e-5)

    def axis(self, inputs) -> int:
        return int(self.a.axis)

    def resolve(self, inputs):
        x = self.need(inputs, 0)
        r = x.rank
        if r < 2 or x.shape[-1] not in (1, 2):
            raise self.fail(f"input must be [..., 1] (real) or [..., 2] (complex), got shape {list(x.shape)}")
        axis = self.axis(inputs)
        a = axis + r if axis < 0 else axis
        if not 0 <= a <= r - 2:
            raise self.fail(f"axis {axis} is out of range for rank {r} (accepted: {-r}..-2 and 0..{r - 2})")
        inverse, onesided = bool(self.a.inverse), bool(self.a.onesided)
        n = x.shape[a]
        length = self.value_of(inputs, 1)
        if length is None:
            length = 2 * (n - 1) if inverse and onesided else n
        else:
            length = scalar_int(self, length, "dft_length")
        if length < 1:
            raise self.fail(f"dft_length must be positive, got {length} (axis {a} has {n} elements)")
        if inverse:
            out_len, out_c = length, 1 if onesided else 2
        else:
            out_len, out_c = (length // 2 + 1 if onesided else length), 2
        return x, a, length, out_len, out_c

    def infer(self, inputs):
        x, a, _, out_len, out_c = self.resolve(inputs)
        shape = list(x.shape)
        shape[a], shape[-1] = out_len, out_c
        return [Info(x.dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        x, a, length, out_len, out_c = self.resolve(inputs)
        return {"outer": int(np.prod(x.shape[:a], dtype=np.int64)), "axis_len": x.shape[a],
                "inner": int(np.prod(x.shape[a + 1:-1], dtype=np.int64)), "in_c": x.shape[-1], "length": length,
                "out_len": out_len, "out_c": out_c, "inverse": int(bool(self.a.inverse)),
                "onesided": int(bool(self.a.onesided))}


class DFT_20(DFT_17):
    attributes = {"inverse": 0, "onesided": 0}
    value_inputs = (1, 2)

    def axis(self, inputs) -> int:
        axis = self.value_of(inputs, 2)
        return -2 if axis is None else scalar_int(self, axis, "axis")
