"""AffineGrid: the sampling grid (N, H, W, 2) or (N, D, H, W, 3) that theta
(N, 2, 3) or (N, 3, 4) makes of the normalised base grid of `size` (N, C, H, W) or
(N, C, D, H, W); the last grid axis is (x, y[, z])."""

from ._base import Info, Op
from ._shape import ints


class AffineGrid(Op):
    attributes = {"align_corners": 0}
    params = "mlrt_affinegrid_params"
    value_inputs = (1,)
    tolerance = (1e-5, 1e-6)

    def infer(self, inputs):
        theta = self.need(inputs, 0)
        size = ints(self.value_of(inputs, 1))
        if len(size) not in (4, 5):
            raise self.fail(f"size must be (N, C, H, W) or (N, C, D, H, W), got {size}")
        nd = len(size) - 2
        if theta.shape != (size[0], nd, nd + 1):
            raise self.fail(f"theta must have shape {(size[0], nd, nd + 1)} for size {size}, got {theta.shape}")
        if any(s < 0 for s in size):
            raise self.fail(f"size {size} must not be negative")
        return [Info(theta.dtype, (size[0], *size[2:], nd))]

    def pack(self, inputs, outputs):
        return {"align_corners": int(bool(self.a.align_corners))}
