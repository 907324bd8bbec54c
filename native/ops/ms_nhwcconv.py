"""NhwcConv (com.microsoft, as onnxruntime): Conv on channels-last tensors.

X is (N, spatial..., C), W (M, kernel..., C / group), the optional B (M), and Y
(N, out..., M); Conv's attributes otherwise (kernel_shape names W's kernel dims).
float and double (float16 runs in float); the C kernel moves X and W to channels first,
runs the Conv kernel and moves Y back, so the results are Conv's (onnxruntime runs
NhwcConv only on GPUs)."""

from ._base import Info, Launch
from .conv import Conv


def channels_first(t: Info) -> Info:
    """t's (N, spatial..., C) Info as (N, C, spatial...)."""
    shape = tuple(t.shape)
    return Info(t.dtype, shape[:1] + shape[-1:] + shape[1:-1]) if len(shape) >= 3 else t


def channels_last(shape) -> tuple:
    shape = tuple(shape)
    return shape[:1] + shape[2:] + shape[1:2]


class NhwcConv(Conv):
    domain = "com.microsoft"

    def geometry(self, inputs):
        moved = [channels_first(t) if i < 2 and t is not None else t for i, t in enumerate(inputs)]
        return super().geometry(moved)

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        return [Info(inputs[0].dtype, channels_last(shape))]

    def launch(self, inputs, outputs):
        return Launch("NhwcConv", self.geometry(inputs)[1])
