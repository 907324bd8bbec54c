"""STFT: the short-time Fourier transform of signal [batch, length, 1 | 2]: frames of
frame_length samples every frame_step samples, each multiplied by the window (input
2; rectangular if absent) and transformed; output [batch, frames, bins, 2] with
frames = (length - frame_length) // frame_step + 1 and bins = frame_length // 2 + 1
when onesided (the default), else frame_length.  frame_length (input 3) defaults to
the window's length, or to the signal length when there is no window either."""

from ._base import Info, Op
from .dft import scalar_int


class STFT(Op):
    attributes = {"onesided": 1}
    params = "mlrt_stft_params"
    value_inputs = (1, 3)
    tolerance = (1e-5, 1e-5)

    def resolve(self, inputs):
        x = self.need(inputs, 0)
        self.need(inputs, 1)
        if x.rank != 3 or x.shape[-1] not in (1, 2):
            raise self.fail(f"signal must be [batch, length, 1 | 2], got shape {list(x.shape)}")
        step = scalar_int(self, self.value_of(inputs, 1), "frame_step")
        window = inputs[2] if len(inputs) > 2 else None
        length = self.value_of(inputs, 3)
        if window is not None and (window.rank != 1 or window.dtype != x.dtype):
            raise self.fail(f"window must be a 1-D {x.dtype} tensor, got a {window.dtype} tensor of shape "
                            f"{list(window.shape)}")
        if length is not None:
            length = scalar_int(self, length, "frame_length")
            if window is not None and window.shape[0] != length:
                raise self.fail(f"window has {window.shape[0]} elements, frame_length is {length}")
        else:
            length = window.shape[0] if window is not None else x.shape[1]
        if step < 1 or length < 1:
            raise self.fail(f"frame_step ({step}) and frame_length ({length}) must be positive")
        if length > x.shape[1]:
            raise self.fail(f"frame_length {length} is longer than the signal ({x.shape[1]} samples)")
        frames = (x.shape[1] - length) // step + 1
        bins = length // 2 + 1 if self.a.onesided else length
        return x, step, length, frames, bins

    def infer(self, inputs):
        x, _, _, frames, bins = self.resolve(inputs)
        return [Info(x.dtype, (x.shape[0], frames, bins, 2))]

    def pack(self, inputs, outputs):
        x, step, length, frames, bins = self.resolve(inputs)
        return {"batch": x.shape[0], "signal_len": x.shape[1], "in_c": x.shape[2], "frame_step": step,
                "frame_length": length, "n_frames": frames, "bins": bins}
