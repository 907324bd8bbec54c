"""DeformConv (2-D): a convolution whose kernel taps sample X at their regular
positions moved by per-position offsets (input 2: [N, offset_group * kh * kw * 2, oH,
oW], (dh, dw) pairs), bilinearly interpolated (outside the image reads 0), optionally
scaled by mask (input 4) and summed with W like Conv (group, strides, dilations,
pads), plus bias B (input 3).  Only 2-D data is supported (so is the reference's)."""

from ._base import Info, Op


class DeformConv(Op):
    attributes = {"dilations": None, "group": 1, "kernel_shape": None, "offset_group": 1, "pads": None,
                  "strides": None}
    params = "mlrt_deform_conv_params"
    tolerance = (1e-4, 1e-5)

    def resolve(self, inputs):
        x, w, off = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        if x.rank != 4 or w.rank != 4:
            raise self.fail(f"only 2-D DeformConv is supported: X {list(x.shape)} and W {list(w.shape)} must be rank 4")
        n, c, h, wd = x.shape
        g, og = int(self.a.group), int(self.a.offset_group)
        kernel = list(self.a.kernel_shape or w.shape[2:])
        strides = list(self.a.strides or [1, 1])
        dil = list(self.a.dilations or [1, 1])
        pads = list(self.a.pads or [0, 0, 0, 0])
        if len(kernel) != 2 or len(strides) != 2 or len(dil) != 2 or len(pads) != 4:
            raise self.fail("kernel_shape, strides and dilations need 2 values, pads 4")
        if list(w.shape[2:]) != kernel:
            raise self.fail(f"kernel_shape {kernel} does not match W {list(w.shape)}")
        if g < 1 or og < 1 or c % g or w.shape[0] % g or w.shape[1] * g != c or c % og:
            raise self.fail(f"X has {c} channels, W is {list(w.shape)}: does not fit group {g} / offset_group {og}")
        if min(strides) < 1 or min(dil) < 1 or min(pads) < 0:
            raise self.fail(f"strides {strides} and dilations {dil} must be positive, pads {pads} not negative")
        out = [(size + pads[d] + pads[d + 2] - (kernel[d] - 1) * dil[d] - 1) // strides[d] + 1
               for d, size in enumerate((h, wd))]
        if min(out) < 0:
            raise self.fail(f"the kernel does not fit the padded input {[h, wd]}")
        taps = kernel[0] * kernel[1]
        if off.shape != (n, og * taps * 2, *out):
            raise self.fail(f"offset must be {[n, og * taps * 2, *out]}, got {list(off.shape)}")
        b = inputs[3] if len(inputs) > 3 else None
        mask = inputs[4] if len(inputs) > 4 else None
        if b is not None and b.shape != (w.shape[0],):
            raise self.fail(f"B must be [{w.shape[0]}], got {list(b.shape)}")
        if mask is not None and mask.shape != (n, og * taps, *out):
            raise self.fail(f"mask must be {[n, og * taps, *out]}, got {list(mask.shape)}")
        if any(t is not None and t.dtype != x.dtype for t in (w, off, b, mask)):
            raise self.fail(f"W, offset, B and mask must have X's type {x.dtype}")
        params = {"group": g, "offset_group": og, "kernel": kernel, "strides": strides, "dilations": dil,
                  "pads_begin": pads[:2]}
        return (n, w.shape[0], *out), params

    def infer(self, inputs):
        shape, _ = self.resolve(inputs)
        return [Info(inputs[0].dtype, shape)]

    def pack(self, inputs, outputs):
        return self.resolve(inputs)[1]
