"""RotaryEmbedding: rotate the first rotary_embedding_dim elements of every head by
per-position cos / sin (pairs (i, i + dim/2), or neighbours when interleaved).

The input is [batch, heads, seq, head_size], or [batch, seq, hidden] with
num_heads; the caches are [batch, seq, dim/2], or [positions, dim/2] tables
indexed by position_ids [batch, seq]."""

import numpy as np

from .._lib import onnx_type
from ._base import Info, Launch, Op, View, broadcast_shape, broadcast_view


class RotaryEmbedding(Op):
    attributes = {"interleaved": 0, "num_heads": 0, "rotary_embedding_dim": 0}
    params = "mlrt_rotary_params"
    tolerance = (1e-5, 1e-6)

    def _plan(self, inputs):
        x, cos, sin = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        pos = inputs[3] if len(inputs) > 3 else None
        if onnx_type(x.dtype) not in (1, 10, 11, 16):
            raise self.fail(f"needs float, double, float16 or bfloat16 input, not {np.dtype(x.dtype).name}")
        if np.dtype(cos.dtype) != np.dtype(x.dtype) or np.dtype(sin.dtype) != np.dtype(x.dtype):
            raise self.fail("cos_cache and sin_cache must have the input's element type")
        if x.rank == 4:
            b, h, s, d = x.shape
            view = View((b, s, h, d), (h * s * d, d, s * d, 1))
        elif x.rank == 3:
            b, s, hidden = x.shape
            h = int(self.a.num_heads)
            if h <= 0 or hidden % h:
                raise self.fail(f"3-D input needs num_heads dividing its hidden size {hidden}")
            d = hidden // h
            view = View((b, s, h, d), (s * hidden, hidden, d, 1))
        else:
            raise self.fail(f"input must be 3-D or 4-D, not of shape {x.shape}")
        dim = int(self.a.rotary_embedding_dim) or d
        if dim % 2 or not 0 < dim <= d:
            raise self.fail(f"rotary_embedding_dim {dim} must be even and at most the head size {d}")
        half = dim // 2
        views = {0: view}
        if pos is not None:
            if np.dtype(pos.dtype) != np.int64 or broadcast_shape(pos.shape, (b, s), where=self.where) != (b, s):
                raise self.fail(f"position_ids of shape {pos.shape} must be int64 [{b}, {s}]")
            for t in (cos, sin):
                if t.rank != 2 or t.shape[1] != half or t.shape != cos.shape:
                    raise self.fail(f"with position_ids the caches must be [positions, {half}], not {t.shape}")
            views[3] = broadcast_view(pos.shape, (b, s))
        else:
            for i, t in ((1, cos), (2, sin)):
                if t.rank > 3 or broadcast_shape(t.shape, (b, s, half), where=self.where) != (b, s, half):
                    raise self.fail(f"caches must be [{b}, {s}, {half}], not {t.shape}")
                views[i] = broadcast_view(t.shape, (b, s, half))
        return dim, pos is not None, views

    def infer(self, inputs):
        self._plan(inputs)
        return [Info(inputs[0].dtype, tuple(inputs[0].shape))]

    def launch(self, inputs, outputs):
        dim, has_pos, views = self._plan(inputs)
        return Launch(self.op_type, {"rotary_dim": dim, "interleaved": int(bool(self.a.interleaved)),
                                     "has_position_ids": int(has_pos)}, views)
