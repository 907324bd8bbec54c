"""RotaryEmbedding (com.microsoft, as onnxruntime): rotate the first rotary_embedding_dim
elements of every head by cos / sin table rows (pairs (i, i + dim/2), or neighbours when
interleaved).  Inputs input, position_ids, cos_cache, sin_cache (this order); the
input is [batch, seq, hidden] or [batch, heads, seq, head_size], the caches
[max_positions, dim/2]; position_ids is [batch, seq], or one start position p (rows
p, p + 1, ...).  `scale` is accepted and unused, as by onnxruntime's CPU kernel;
is_packed_batching is not supported.  The ai.onnx RotaryEmbedding kernel does the work."""

import numpy as np

from ... import _errors
from .._lib import onnx_type
from ._base import Info, Launch, Op, View


class RotaryEmbedding(Op):
    domain = "com.microsoft"
    attributes = {"interleaved": 0, "is_packed_batching": 0, "num_heads": 0, "rotary_embedding_dim": 0, "scale": 1.0}
    params = "mlrt_ms_rotary_params"
    tolerance = (1e-5, 1e-6)

    def _plan(self, inputs):
        x, pos = self.need(inputs, 0), self.need(inputs, 1)
        cos, sin = self.need(inputs, 2), self.need(inputs, 3)
        if self.a.is_packed_batching:
            raise _errors.NotImplemented(f"{self.where}: is_packed_batching is not supported")
        if onnx_type(x.dtype) not in (1, 10, 16):
            raise self.fail(f"needs float, float16 or bfloat16 input, not {np.dtype(x.dtype).name}")
        if np.dtype(cos.dtype) != np.dtype(x.dtype) or np.dtype(sin.dtype) != np.dtype(x.dtype):
            raise self.fail("cos_cache and sin_cache must have the input's element type")
        if cos.rank != 2 or tuple(sin.shape) != tuple(cos.shape):
            raise self.fail(f"cos_cache {cos.shape} and sin_cache {sin.shape} must be one 2-D shape")
        dim = int(self.a.rotary_embedding_dim) or 2 * cos.shape[1]
        if x.rank == 4:
            b, h, s, d = x.shape
            view = View((b, s, h, d), (h * s * d, d, s * d, 1))
        elif x.rank == 3:
            b, s, hidden = x.shape
            h = int(self.a.num_heads) or (hidden // dim if dim and not self.a.rotary_embedding_dim else 0)
            if h <= 0 or hidden % h:
                raise self.fail(f"3-D input needs num_heads dividing its hidden size {hidden}")
            d = hidden // h
            view = View((b, s, h, d), (s * hidden, hidden, d, 1))
        else:
            raise self.fail(f"input must be 3-D or 4-D, not of shape {x.shape}")
        if dim % 2 or not 0 < dim <= d or cos.shape[1] != dim // 2:
            raise self.fail(f"rotary dim {dim} must be even, at most the head size {d} and twice the caches' "
                            f"last dim {cos.shape[1]}")
        if np.dtype(pos.dtype) != np.int64:
            raise self.fail(f"position_ids must be int64, not {np.dtype(pos.dtype).name}")
        if tuple(pos.shape) == (b, s) and pos.rank == 2:
            offset = 0
        elif pos.rank == 1 and pos.shape[0] == 1:
            offset = 1
        else:
            raise self.fail(f"position_ids of shape {pos.shape} must be [1] or [{b}, {s}]")
        return dim, offset, {0: view}

    def infer(self, inputs):
        self._plan(inputs)
        return [Info(inputs[0].dtype, tuple(inputs[0].shape))]

    def launch(self, inputs, outputs):
        dim, offset, views = self._plan(inputs)
        return Launch("RotaryEmbedding", {"rotary_dim": dim, "interleaved": int(bool(self.a.interleaved)),
                                          "offset_form": offset}, views)
