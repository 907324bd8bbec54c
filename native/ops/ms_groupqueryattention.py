"""GroupQueryAttention (com.microsoft, as onnxruntime's CPU kernel): causal attention of
num_heads query heads over kv_num_heads key/value heads (query head h reads kv head
h / (num_heads / kv_num_heads)), with a key/value cache: past_key / past_value [batch,
kv_heads, past, head_size] followed by the new keys make present_key / present_value.
query is [batch, seq, num_heads * head_size], or packed Q, K, V when key and value are
absent.  seqlens_k (int32 [batch], keys - 1 per row) and total_sequence_length (int32)
must describe full rows: every seqlens_k + 1 == total_sequence_length == past + seq
(checked when it runs); right-padded rows of other lengths are not supported.
Attributes scale, softcap and local_window_size (the last local_window_size keys) are
supported; do_rotary, smooth_softmax, attention_bias, head_sink and qk_output are not."""

import numpy as np

from ... import _errors
from ._base import REQUIRED, Info
from .ms_attention import _MsAttention


class GroupQueryAttention(_MsAttention):
    attributes = {"num_heads": REQUIRED, "kv_num_heads": REQUIRED, "scale": 0.0, "softcap": 0.0,
                  "local_window_size": -1, "do_rotary": 0, "rotary_interleaved": 0, "smooth_softmax": 0,
                  "qk_output": 0}

    def _plan(self, inputs):
        q = self.need(inputs, 0)
        opt = [inputs[i] if i < len(inputs) else None for i in range(1, 14)]
        k, v, past_k, past_v, lens, total = opt[:6]
        self._float32(inputs, (0, 1, 2, 3, 4))
        if self.a.do_rotary or self.a.smooth_softmax or self.a.qk_output or any(x is not None for x in opt[6:]) \
                or len(self.node.output) > 3:
            raise _errors.NotImplemented(f"{self.where}: do_rotary, smooth_softmax, qk_output, cos/sin caches, "
                                         "position_ids, attention_bias and head_sink are not supported")
        lens, total = self.need(inputs, 5), self.need(inputs, 6)
        n, nk = int(self.a.num_heads), int(self.a.kv_num_heads)
        if n <= 0 or nk <= 0 or n % nk:
            raise self.fail(f"{n} query heads cannot share {nk} key/value heads")
        if q.rank != 3:
            raise self.fail(f"query must be 3-D, not of shape {q.shape}")
        b, s, width = q.shape
        if (k is None) != (v is None):
            raise self.fail("key and value come together")
        if k is None:
            if width % (n + 2 * nk):
                raise self.fail(f"packed query's {width} columns do not split into {n} + 2 * {nk} heads")
            d = width // (n + 2 * nk)
        else:
            if width % n:
                raise self.fail(f"query's {width} columns do not split into {n} heads")
            d = width // n
            if tuple(k.shape) != (b, s, nk * d) or tuple(v.shape) != (b, s, nk * d):
                raise self.fail(f"key {k.shape} and value {v.shape} must be [{b}, {s}, {nk * d}]")
        if (past_k is None) != (past_v is None):
            raise self.fail("past_key and past_value come together")
        p = 0
        if past_k is not None:
            p = past_k.shape[2] if past_k.rank == 4 else -1
            if tuple(past_k.shape) != (b, nk, p, d) or tuple(past_v.shape) != (b, nk, p, d):
                raise self.fail(f"past_key {past_k.shape} / past_value {past_v.shape} must be [{b}, {nk}, past, {d}]")
        if np.dtype(lens.dtype) != np.int32 or tuple(lens.shape) != (b,):
            raise self.fail(f"seqlens_k must be int32 [{b}], not {np.dtype(lens.dtype).name} {lens.shape}")
        if np.dtype(total.dtype) != np.int32 or total.size != 1:
            raise self.fail("total_sequence_length must be one int32")
        t = p + s
        outs = [Info(q.dtype, (b, s, n * d)), Info(q.dtype, (b, nk, t, d)), Info(q.dtype, (b, nk, t, d))]
        return dict(b=b, s=s, kv=s, p=p, n=n, nk=nk, head_size=d, v_head_size=d, mask=0, outputs=outs)

    def _params(self, r):
        params = super()._params(r)
        lws = int(self.a.local_window_size)
        params.update(kv_heads=r["nk"], unidirectional=1, local_window=lws - 1 if lws > 0 else -1,
                      softcap=float(self.a.softcap or 0.0))
        return params
