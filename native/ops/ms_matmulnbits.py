"""MatMulNBits (com.microsoft, as onnxruntime): Y [..., N] = A [..., K] @ W^T (+ bias), W
[N, K] dequantized blockwise along K from `bits`-bit codes:
W[n, k] = (code - zero_point) * scale of block (n, k // block_size).

B is uint8 [N, k_blocks, blob] (k_blocks = ceil(K / block_size), blob = block_size *
bits / 8), codes packed low bits first; scales (A's type) hold N * k_blocks values;
zero_points are packed uint8 codes (N * ceil(k_blocks * bits / 8) bytes) or of the
scales' type, 2^(bits-1) when absent.  bits 2, 4 or 8; block_size a power of two >= 16.
accuracy_level is accepted; the product is always computed in float (float16 A runs
on float32 copies).  g_idx (act-order) is not supported."""

import numpy as np

from ... import _errors
from ._base import REQUIRED, Info, Op

_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))


class MatMulNBits(Op):
    domain = "com.microsoft"
    attributes = {"K": REQUIRED, "N": REQUIRED, "bits": 4, "block_size": REQUIRED, "accuracy_level": 0}
    params = "mlrt_matmul_nbits_params"
    tolerance = (1e-4, 1e-4)

    def _check(self, inputs):
        a, b, scales = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        opt = lambda i: inputs[i] if len(inputs) > i else None  # noqa: E731
        zp, g_idx, bias = opt(3), opt(4), opt(5)
        if g_idx is not None:
            raise _errors.NotImplemented(f"{self.where}: g_idx (act-order) is not supported")
        K, N, bits, bs = int(self.a.K), int(self.a.N), int(self.a.bits), int(self.a.block_size)
        if bits not in (2, 4, 8):
            raise self.fail(f"bits must be 2, 4 or 8, got {bits}")
        if bs < 16 or bs & (bs - 1):
            raise self.fail(f"block_size must be a power of two >= 16, got {bs}")
        if K < 1 or N < 1:
            raise self.fail(f"K and N must be positive, got K = {K}, N = {N}")
        if not 0 <= int(self.a.accuracy_level) <= 4:
            raise self.fail(f"accuracy_level must be 0 to 4, got {self.a.accuracy_level}")
        dtype = np.dtype(a.dtype)
        if dtype not in _FLOATS:
            raise self.fail(f"A has type {dtype.name}, expected float32 or float16")
        if a.rank < 1 or a.shape[-1] != K:
            raise self.fail(f"A of shape {tuple(a.shape)} must end with K = {K}")
        k_blocks = -(-K // bs)
        blob = bs * bits // 8
        if np.dtype(b.dtype) != np.uint8 or tuple(b.shape) != (N, k_blocks, blob):
            raise self.fail(f"B must be uint8 of shape {(N, k_blocks, blob)}, got {np.dtype(b.dtype).name} "
                            f"{tuple(b.shape)}")
        if np.dtype(scales.dtype) != dtype or scales.size != N * k_blocks or scales.rank not in (1, 2):
            raise self.fail(f"scales must be {dtype.name} with N * k_blocks = {N * k_blocks} elements "
                            f"((N * k_blocks,) or (N, k_blocks)), got {np.dtype(scales.dtype).name} "
                            f"{tuple(scales.shape)}")
        zp_kind = 0
        if zp is not None:
            packed = N * -(-k_blocks * bits // 8)
            if np.dtype(zp.dtype) == np.uint8 and zp.size == packed:
                zp_kind = 1
            elif np.dtype(zp.dtype) == dtype and zp.size == N * k_blocks:
                zp_kind = 2
            else:
                raise self.fail(f"zero_points must be uint8 with {packed} elements (packed) or {dtype.name} with "
                                f"{N * k_blocks}, got {np.dtype(zp.dtype).name} {tuple(zp.shape)}")
        if bias is not None and (np.dtype(bias.dtype) != dtype or tuple(bias.shape) != (N,)):
            raise self.fail(f"bias must be {dtype.name} of shape ({N},), got {np.dtype(bias.dtype).name} "
                            f"{tuple(bias.shape)}")
        return dict(K=K, N=N, bits=bits, block_size=bs, zp_kind=zp_kind)

    def infer(self, inputs):
        self._check(inputs)
        a = inputs[0]
        return [Info(a.dtype, tuple(a.shape[:-1]) + (int(self.a.N),))]

    def pack(self, inputs, outputs):
        return self._check(inputs)
