"""Shared semantics of the windowed pooling operators (MaxPool, AveragePool, LpPool):
attributes, output shape (auto_pad, ceil_mode) and the C parameter struct."""

from __future__ import annotations

from ._base import REQUIRED, Info, Op
from ._conv import pad6, per_dim, window_geometry


class _Pool(Op):
    attributes = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": None, "kernel_shape": REQUIRED, "pads": None,
                  "strides": None}
    params = "mlrt_pool_params"

    def geometry(self, inputs):
        x = self.need(inputs, 0)
        if x.rank < 3:
            raise self.fail(f"X must have rank >= 3 (N, C, spatial...), got shape {x.shape}")
        n = x.rank - 2
        kernel = per_dim(self, "kernel_shape", self.a.kernel_shape, n, 1, 1)
        strides = per_dim(self, "strides", self.a.strides, n, 1, 1)
        dilations = per_dim(self, "dilations", self.a.dilations, n, 1, 1)
        out, begin, end = window_geometry(self, x.shape[2:], kernel, strides, dilations, self.a.pads,
                                          self.a.auto_pad, bool(self.a.ceil_mode))
        params = dict(n_spatial=n, kernel=pad6(kernel, 1), strides=pad6(strides, 1), dilations=pad6(dilations, 1),
                      pads_begin=pad6(begin), pads_end=pad6(end))
        return (x.shape[0], x.shape[1], *out), params

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        return [Info(inputs[0].dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        return self.geometry(inputs)[1]


class _GlobalPool(Op):
    """One value per (image, channel): Y is (N, C, 1, ..., 1)."""

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank < 2:
            raise self.fail(f"X must have rank >= 2 (N, C, spatial...), got shape {x.shape}")
        if any(d == 0 for d in x.shape[2:]) and x.shape[0] * x.shape[1] > 0:
            raise self.fail(f"cannot pool an empty spatial extent {x.shape[2:]}")
        return [Info(x.dtype, tuple(x.shape[:2]) + (1,) * (x.rank - 2))]
