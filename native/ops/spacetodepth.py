"""SpaceToDepth: move spatial blocks into channels (mode CRD from opset 28)."""

from ._base import Info
from ._shape import _Copy, permuted_view


class SpaceToDepth(_Copy):
    attributes = {"blocksize": None}

    def dims(self, x):
        bs = self.a.blocksize
        if bs is None or bs <= 0:
            raise self.fail("attribute 'blocksize' must be a positive integer")
        if x.rank != 4 or x.shape[2] % bs or x.shape[3] % bs:
            raise self.fail(f"input shape {x.shape} is not 4-D with height and width divisible by {bs}")
        b, c, h, w = x.shape
        return b, c, h // bs, w // bs, bs

    def infer(self, inputs):
        x = self.need(inputs, 0)
        b, c, h, w, bs = self.dims(x)
        return [Info(x.dtype, (b, c * bs * bs, h, w))]

    def view(self, inputs, outputs):
        b, c, h, w, bs = self.dims(inputs[0])
        crd = getattr(self.a, "mode", "DCR") == "CRD"
        return permuted_view((b, c, h, bs, w, bs), (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4))


class SpaceToDepth_28(SpaceToDepth):
    attributes = {"blocksize": None, "mode": "DCR"}

    def dims(self, x):
        if self.a.mode not in ("DCR", "CRD"):
            raise self.fail(f"mode '{self.a.mode}' is not DCR or CRD")
        return super().dims(x)
