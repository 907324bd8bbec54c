"""DepthToSpace: move channel blocks into spatial blocks (modes DCR and CRD)."""

from ._base import Info
from ._shape import _Copy, permuted_view


class DepthToSpace(_Copy):
    attributes = {"blocksize": None, "mode": "DCR"}  # mode from opset 11

    def dims(self, x):
        bs = self.a.blocksize
        if bs is None or bs <= 0:
            raise self.fail("attribute 'blocksize' must be a positive integer")
        if x.rank != 4 or x.shape[1] % (bs * bs):
            raise self.fail(f"input shape {x.shape} is not 4-D with channels divisible by {bs * bs}")
        if self.a.mode not in ("DCR", "CRD"):
            raise self.fail(f"mode '{self.a.mode}' is not DCR or CRD")
        b, c, h, w = x.shape
        return b, c // (bs * bs), h, w, bs

    def infer(self, inputs):
        x = self.need(inputs, 0)
        b, c, h, w, bs = self.dims(x)
        return [Info(x.dtype, (b, c, h * bs, w * bs))]

    def view(self, inputs, outputs):
        b, c, h, w, bs = self.dims(inputs[0])
        if self.a.mode == "DCR":
            return permuted_view((b, bs, bs, c, h, w), (0, 3, 4, 1, 5, 2))
        return permuted_view((b, c, bs, bs, h, w), (0, 1, 4, 2, 5, 3))
