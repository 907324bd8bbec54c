"""QLinearAveragePool (com.microsoft, as onnxruntime): AveragePool on dequantized X, requantized:
y = saturate(round(mean / y_scale + y_zero_point)).

X is (N, C, spatial...) or, with channels_last, (N, spatial..., C), 1 to 3 spatial dims;
X and Y share one type, int8 or uint8; scales per tensor.  As onnxruntime: each window is
clipped to X (count_include_pad counts the whole kernel), its dequantized values summed in
float in row-major order; a kernel covering the whole unpadded image runs
QLinearGlobalAveragePool instead.  Equal to onnxruntime but where float rounds apart."""

import numpy as np

from ._base import Info, Launch
from ._pool import _Pool
from ._quant import check_unary_quantized
from .ms_nhwcconv import channels_first, channels_last


class QLinearAveragePool(_Pool):
    domain = "com.microsoft"
    attributes = {**_Pool.attributes, "channels_last": 0, "count_include_pad": 0}
    params = "mlrt_qlinear_avgpool_params"
    tolerance = (0, 1)  # (rtol, atol in units of the quantized type)

    def _plan(self, inputs):
        ins = check_unary_quantized(self, inputs)
        x, x_s, x_z, y_s, y_z = ins
        if not 3 <= x.rank <= 5:
            raise self.fail(f"X must have 1 to 3 spatial dims (rank 3 to 5), got shape {tuple(x.shape)}")
        if self.a.dilations is not None and any(int(d) != 1 for d in self.a.dilations):
            raise self.fail(f"dilations {list(self.a.dilations)} are not supported (onnxruntime ignores them)")
        last = bool(self.a.channels_last)
        first = channels_first(x) if last else x
        shape, p = self.geometry([first])
        n = p["n_spatial"]
        spatial = tuple(first.shape[2:])
        glob = tuple(p["kernel"][:n]) == spatial and not any(p["pads_begin"][:n]) and not any(p["pads_end"][:n])
        params = {"n_spatial": n, "kernel": p["kernel"][:3], "strides": p["strides"][:3],
                  "pads_begin": p["pads_begin"][:3], "count_include_pad": int(bool(self.a.count_include_pad)),
                  "channels_last": int(last), "global": int(glob)}
        return (channels_last(shape) if last else tuple(shape)), params

    def infer(self, inputs):
        shape, _ = self._plan(inputs)
        return [Info(np.dtype(inputs[0].dtype), shape)]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, self._plan(inputs)[1])
