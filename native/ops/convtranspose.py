"""ConvTranspose: the gradient of Conv with respect to its input (fractionally strided
convolution), with groups, strides, dilations, pads, output_padding, auto_pad and
output_shape (which, when given, decides the pads)."""

from ._base import Info, Op
from ._conv import conv_operands, MAX_SPATIAL, pad6, per_dim


class ConvTranspose(Op):
    attributes = {"auto_pad": "NOTSET", "dilations": None, "group": 1, "kernel_shape": None, "output_padding": None,
                  "output_shape": None, "pads": None, "strides": None}
    params = "mlrt_conv_params"
    tolerance = (1e-4, 1e-5)

    def geometry(self, inputs):
        x, w, b, n = conv_operands(self, inputs)
        if n > MAX_SPATIAL:
            raise self.fail(f"{n} spatial dimensions: at most {MAX_SPATIAL} are supported")
        group = int(self.a.group)
        c = x.shape[1]
        if group < 1 or c % group or w.shape[0] != c:
            raise self.fail(f"W {w.shape} must be (C={c}, M / group, ...) with group {group} dividing C")
        m = w.shape[1] * group
        if b is not None and tuple(b.shape) != (m,):
            raise self.fail(f"B has shape {b.shape}, expected ({m},)")
        kernel = list(w.shape[2:])
        if any(k < 1 for k in kernel):  # (the C kernel divides by the kernel's extent)
            raise self.fail(f"W {w.shape} has an empty kernel")
        if self.a.kernel_shape and list(self.a.kernel_shape) != kernel:
            raise self.fail(f"kernel_shape {list(self.a.kernel_shape)} differs from W's spatial shape {kernel}")
        strides = per_dim(self, "strides", self.a.strides, n, 1, 1)
        dilations = per_dim(self, "dilations", self.a.dilations, n, 1, 1)
        out_pad = per_dim(self, "output_padding", self.a.output_padding, n, 0, 0)
        full = [s * (i - 1) + op + (k - 1) * d + 1
                for s, i, op, k, d in zip(strides, x.shape[2:], out_pad, kernel, dilations)]
        auto_pad = (self.a.auto_pad or "NOTSET").upper()
        if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
            raise self.fail(f"auto_pad '{auto_pad}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
        if self.a.output_shape is not None and len(self.a.output_shape) or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            if self.a.output_shape is not None and len(self.a.output_shape):
                out = [int(v) for v in self.a.output_shape][-n:]
                if len(out) != n:
                    raise self.fail(f"output_shape {list(self.a.output_shape)} has fewer than {n} values")
            else:
                out = [i * s for i, s in zip(x.shape[2:], strides)]
            total = [f - o for f, o in zip(full, out)]
            if auto_pad == "SAME_UPPER":
                begin = [t // 2 for t in total]
            else:
                begin = [t - t // 2 for t in total]
            end = [t - bg for t, bg in zip(total, begin)]
        else:
            pads = [0] * (2 * n) if auto_pad == "VALID" else per_dim(self, "pads", self.a.pads, 2 * n, 0, 0)
            begin, end = pads[:n], pads[n:]
            out = [f - bg - e for f, bg, e in zip(full, begin, end)]
        if any(o < 0 for o in out):
            raise self.fail(f"the output shape {out} is negative")
        params = dict(group=group, n_spatial=n, kernel=pad6(kernel, 1), strides=pad6(strides, 1),
                      dilations=pad6(dilations, 1), pads_begin=pad6(begin), pads_end=pad6(end), activation=0)
        return (x.shape[0], m, *out), params

    def infer(self, inputs):
        shape, _ = self.geometry(inputs)
        return [Info(inputs[0].dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        return self.geometry(inputs)[1]
