"""CenterCropPad: crop or zero-pad the chosen axes (all, or `axes`) to `shape`,
centred (an odd difference puts the extra element at the end).  Runs on the Pad
kernel: per axis, the run of input kept and the padding before it."""

from .._lib import MAX_RANK
from ._base import Info, Op
from ._shape import ints, normalize_axes


class CenterCropPad(Op):
    attributes = {"axes": None}
    params = "mlrt_pad_params"
    value_inputs = (1,)
    kernel = "Pad"

    def plan(self, inputs):
        x = self.need(inputs, 0)
        shape = ints(self.value_of(inputs, 1))
        axes = list(range(x.rank)) if self.a.axes is None else normalize_axes(self, ints(self.a.axes), x.rank)
        if len(shape) != len(axes):
            raise self.fail(f"shape {shape} has {len(shape)} values for {len(axes)} axes")
        if any(s < 0 for s in shape):
            raise self.fail(f"shape {shape} must not be negative")
        if x.rank > MAX_RANK:
            raise self.fail(f"rank {x.rank} is over the supported {MAX_RANK}")
        out = list(x.shape)
        start, keep, before = [0] * x.rank, list(x.shape), [0] * x.rank
        for a, s in zip(axes, shape):
            n = x.shape[a]
            out[a] = s
            if s < n:
                start[a], keep[a] = (n - s) // 2, s
            elif s > n:
                before[a] = (s - n) // 2
        return x, tuple(out), {"mode": 0, "src_start": start, "src_len": keep, "pad_begin": before, "value_bits": 0}

    def infer(self, inputs):
        x, out, _ = self.plan(inputs)
        return [Info(x.dtype, out)]

    def pack(self, inputs, outputs):
        return self.plan(inputs)[2]
