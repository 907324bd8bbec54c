"""Conv: N-D convolution with groups, strides, dilations and pads (auto_pad resolved
here); optional bias.  kernel_shape defaults to W's spatial shape.  A constant float32
W is packed once, as the C kernel's micro-kernels read it, and handed to the kernel
after the node's inputs (`packed_weights` names the input)."""

import numpy as np

from .. import _lib
from ._base import Info, Op
from ._conv import conv_operands, pad6, per_dim, window_geometry


class Conv(Op):
    attributes = {"auto_pad": "NOTSET", "dilations": None, "group": 1, "kernel_shape": None, "pads": None,
                  "strides": None}
    params = "mlrt_conv_params"
    tolerance = (1e-4, 1e-5)

    def geometry(self, inputs):
        x, w, b, n = conv_operands(self, inputs)
        group = int(self.a.group)
        c, m = x.shape[1], w.shape[0]
        if group < 1 or c % group or m % group:
            raise self.fail(f"group {group} must divide the input channels {c} and the filters {m}")
        if w.shape[1] != c // group:
            raise self.fail(f"W has {w.shape[1]} channels per group, X has {c} / {group} = {c // group}")
        kernel = per_dim(self, "kernel_shape", self.a.kernel_shape, n, 1, 1) if self.a.kernel_shape else list(w.shape[2:])
        if list(kernel) != list(w.shape[2:]):
            raise self.fail(f"kernel_shape {kernel} differs from W's spatial shape {list(w.shape[2:])}")
        if b is not None and tuple(b.shape) != (m,):
            raise self.fail(f"B has shape {b.shape}, expected ({m},)")
        strides = per_dim(self, "strides", self.a.strides, n, 1, 1)
        dilations = per_dim(self, "dilations", self.a.dilations, n, 1, 1)
        out, begin, end = window_geometry(self, x.shape[2:], kernel, strides, dilations, self.a.pads,
                                          self.a.auto_pad)
        return (x.shape[0], m, *out), dict(group=group, n_spatial=n, kernel=pad6(kernel, 1),
                                          strides=pad6(strides, 1), dilations=pad6(dilations, 1),
                                          pads_begin=pad6(begin), pads_end=pad6(end), activation=0)

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        return [Info(inputs[0].dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        return self.geometry(inputs)[1]

    def launch(self, inputs, outputs):
        launch = super().launch(inputs, outputs)
        packed, kind = self.packed_weights(inputs, launch.params)
        if packed is not None:
            launch.params["packed_weights"] = len(inputs)
            launch.params["winograd"] = kind  # (the field names the kind: 1 Winograd filters, 2 filter vectors)
            launch.extra.append(packed)
        return launch

    def packed_weights(self, inputs, params: dict):
        """A constant float32 W made over by the C kernel's own code, once per node and
        geometry, and its kind: (filters, 1) as Winograd filters where
        mlrt_conv_winograd_fits says that path is faster (3 x 3, stride 1), else (filter
        vectors, 2) where mlrt_conv_fvec_fits takes the conv (AVX-512, one group, 2 taps or
        more), else (W packed for the micro-kernels by mlrt_conv_pack_weights, 0); (None,
        0) where the kernel would read none (no micro-kernels on this CPU, one input
        channel in each of several groups: the depthwise kernels)."""
        w, x = inputs[1], inputs[0]
        group = params["group"]
        if w.value is None or np.dtype(x.dtype) != np.float32 or (w.shape[1] == 1 and group > 1) or w.value.size == 0:
            return None, 0  # (no filters, or filters of nothing: an empty output, or zeros plus the bias)
        ffi, lib = _lib.ffi(), _lib.lib()
        kind = 0  # the kernel's packed-weights kind: 0 strip panels, 1 Winograd filters, 2 filter vectors
        if x.rank in (3, 4):  # (a 1-D conv as one row: height 1, width its length)
            _, struct, _ = _lib.pack_params(self.params, params)
            height, width = (x.shape[2], x.shape[3]) if x.rank == 4 else (1, x.shape[2])
            if x.rank == 4 and lib.mlrt_conv_winograd_fits(struct, x.shape[1], w.shape[0], height, width):
                kind = 1
            elif hasattr(lib, "mlrt_conv_fvec_fits") and lib.mlrt_conv_fvec_fits(struct, x.shape[1], w.shape[0],
                                                                                 height, width):
                kind = 2
        cached = getattr(self, "_packed", None)
        if cached is not None and cached[0] is w.value and cached[1] == (group, kind):
            return cached[2], kind
        weights = np.ascontiguousarray(w.value, np.float32)
        filters = weights.shape[0]
        if kind == 1:
            pack, args = lib.mlrt_conv_winograd_pack, (group, filters, weights.shape[1])
        elif kind == 2:
            pack, args = lib.mlrt_conv_fvec_pack, (filters, weights.shape[1], weights.size // filters // weights.shape[1])
        else:
            pack, args = lib.mlrt_conv_pack_weights, (group, filters, weights.size // filters)
        size = ffi.new("int64_t *")
        _lib.raise_status(pack(*args, ffi.NULL, 0, size, ffi.NULL), self.where)
        packed = None
        if size[0]:
            packed = np.empty(size[0], np.float32)
            _lib.raise_status(pack(*args, ffi.cast("float *", weights.ctypes.data), packed.size, size,
                                   ffi.cast("float *", packed.ctypes.data)), self.where)
        self._packed = (w.value, (group, kind), packed)
        return packed, kind
