"""MelWeightMatrix: [dft_length // 2 + 1, num_mel_bins] triangular filters, peak 1,
spaced evenly on the mel scale (mel(f) = 2595 log10(1 + f / 700)) between
lower_edge_hertz and upper_edge_hertz, to right-multiply a one-sided spectrogram.
Band edges fall on spectrogram bins floor((dft_length + 1) f / sample_rate); edges
outside the matrix are clipped (the reference would wrap or fail there)."""

import numpy as np
from onnx import TensorProto

from ._base import Info, Op
from .dft import scalar_int
from .hannwindow import output_dtype


def scalar_float(op: Op, value, what: str) -> float:
    a = np.asarray(value)
    if a.size != 1 or a.ndim > 1 or a.dtype.kind != "f":
        raise op.fail(f"{what} must be a float scalar, not a {a.dtype.name} tensor of shape {list(a.shape)}")
    return float(a.reshape(-1)[0])


class MelWeightMatrix(Op):
    attributes = {"output_datatype": TensorProto.FLOAT}
    params = "mlrt_mel_params"
    value_inputs = (0, 1, 2, 3, 4)

    def resolve(self, inputs):
        for i in range(5):
            self.need(inputs, i)
        bins = scalar_int(self, self.value_of(inputs, 0), "num_mel_bins")
        length = scalar_int(self, self.value_of(inputs, 1), "dft_length")
        rate = scalar_int(self, self.value_of(inputs, 2), "sample_rate")
        low = scalar_float(self, self.value_of(inputs, 3), "lower_edge_hertz")
        high = scalar_float(self, self.value_of(inputs, 4), "upper_edge_hertz")
        if bins < 0 or length < 1 or rate < 1:
            raise self.fail(f"num_mel_bins ({bins}) must be >= 0, dft_length ({length}) and sample_rate ({rate}) > 0")
        if not (np.isfinite(low) and np.isfinite(high)):
            raise self.fail(f"the band edges must be finite, got {low} and {high} Hz")
        return {"num_mel_bins": bins, "dft_length": length, "sample_rate": rate, "lower_edge_hertz": low,
                "upper_edge_hertz": high}

    def infer(self, inputs):
        p = self.resolve(inputs)
        return [Info(output_dtype(self, int(self.a.output_datatype)), (p["dft_length"] // 2 + 1, p["num_mel_bins"]))]

    def pack(self, inputs, outputs):
        return self.resolve(inputs)
