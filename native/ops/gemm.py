"""Gemm: Y = alpha * A' B' + beta * C, A' = A or A^T, B' = B or B^T, C broadcast to (M, N).

Before opset 7 broadcasting C needs `broadcast=1`; without it C must be (M, N)."""

import numpy as np

from .. import _lib
from ._base import Info, Launch, Op, broadcast_view

# A constant float32 B (K x N) at least this wide is packed once in the GEMM's strips
# even where it could be read in place: its rows lie 8 KB or more apart, each row of a
# strip on pages of its own (a classifier head of 6625 columns: 1.2x the speed on one
# thread, 1.35x on two; 1024 columns: 1.04x, not worth a second copy of the weights)
WIDE_B = 2048


class Gemm(Op):
    attributes = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0, "broadcast": 0}
    params = "mlrt_gemm_params"
    tolerance = (1e-4, 1e-4)  # float32 sums over K: both sides round, in different orders

    def _shapes(self, inputs):
        a, b = self.need(inputs, 0), self.need(inputs, 1)
        c = inputs[2] if len(inputs) > 2 else None
        for i in (a, b, c):
            if i is not None and np.dtype(i.dtype) != np.dtype(a.dtype):
                raise self.fail(f"inputs have different element types: {np.dtype(a.dtype).name}, "
                                f"{np.dtype(i.dtype).name}")
        if a.rank != 2 or b.rank != 2:
            raise self.fail(f"A and B must be 2-D, got shapes {a.shape} and {b.shape}")
        m, k = a.shape[::-1] if self.a.transA else a.shape
        kb, n = b.shape[::-1] if self.a.transB else b.shape
        if k != kb:
            raise self.fail(f"inner dimensions differ: A' is {m}x{k}, B' is {kb}x{n}")
        return a, c, (m, n)

    def _check_c(self, c, shape):
        if c is None:
            return
        if self.opset < 7 and not self.a.broadcast:
            if tuple(c.shape) != shape:
                raise self.fail(f"C has shape {c.shape}, expected {shape} (set broadcast=1 to broadcast)")
            return
        if c.rank > 2 or any(d not in (1, n) for d, n in zip(c.shape[::-1], shape[::-1])):
            raise self.fail(f"C of shape {c.shape} does not broadcast to {shape}")

    def infer(self, inputs):
        a, c, shape = self._shapes(inputs)
        self._check_c(c, shape)
        return [Info(a.dtype, shape)]

    def launch(self, inputs, outputs):
        _, c, shape = self._shapes(inputs)
        views = {2: broadcast_view(c.shape, shape)} if c is not None else {}
        params = {"trans_a": int(self.a.transA), "trans_b": int(self.a.transB),
                  "alpha": float(self.a.alpha), "beta": float(self.a.beta)}
        launch = Launch("Gemm", params, views)
        transposed = self._b_transposed(inputs, shape[0])
        if transposed is not None:  # read in place of B: no strips of B^T packed per run
            params["b_transposed"] = len(inputs)
            launch.extra.append(transposed)
        return launch

    def _b_transposed(self, inputs, rows: int):
        """A constant float B made over once per node, read in place of B by a product of
        several rows, else None: float32 B under transB (a classifier's weights as
        exporters write them) or wide, packed in the strips the GEMM's micro-kernels read
        (mlrt_gemm_pack_b: a wide B read in place misses the caches row by row); other
        float B under transB, B^T.
        One row (batch 1) is a matrix-vector product that reads B's rows in place: no
        second copy of what may be most of the model."""
        b = inputs[1]
        if rows < 2 or b.value is None or np.dtype(b.dtype) not in (np.float32, np.float64):
            return None
        cached = getattr(self, "_made_over", None)
        if cached is not None and cached[0] is b.value:
            return cached[1]
        made = None
        # (read in place, B is no worse than packed unless wide: see WIDE_B; B^T was a copy anyway)
        if np.dtype(b.dtype) == np.float32 and (self.a.transB or b.shape[1] >= WIDE_B):
            made = packed_strips(b.value, bool(self.a.transB))
        if made is None and self.a.transB:
            made = np.ascontiguousarray(np.asarray(b.value).T)
        self._made_over = (b.value, made)
        return made


def packed_strips(b: np.ndarray, trans_b: bool):
    """B packed by mlrt_gemm_pack_b, or None (no micro-kernels here, an older runtime)."""
    lib = _lib.lib()
    if not hasattr(lib, "mlrt_gemm_pack_b") or b.ndim != 2 or b.size == 0:
        return None
    ffi = _lib.ffi()
    b = np.ascontiguousarray(b, np.float32)
    k, n = b.shape[::-1] if trans_b else b.shape
    size = ffi.new("int64_t *")
    _lib.raise_status(lib.mlrt_gemm_pack_b(int(trans_b), k, n, ffi.NULL, 0, size, ffi.NULL), "Gemm")
    if not size[0]:
        return None
    packed = np.empty(size[0], np.float32)
    _lib.raise_status(lib.mlrt_gemm_pack_b(int(trans_b), k, n, ffi.cast("float *", b.ctypes.data), packed.size, size,
                                           ffi.cast("float *", packed.ctypes.data)), "Gemm")
    return packed


class Gemm_7(Gemm):
    attributes = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}
