"""GroupQueryAttention (com.microsoft, as onnxruntime's CPU kernel): causal attention of
num_heads query heads over kv_num_heads key/value heads (query head h reads kv head
h / (num_heads / kv_num_heads)), with a key/value cache.  query is [batch, seq,
num_heads * head_size], or packed Q, K, V when key and value are absent; past_key /
past_value are [batch, kv_heads, past, head_size].

Row b holds t_b = seqlens_k[b] + 1 keys (int32 [batch]); total_sequence_length (one
int32, read while planning) is the longest.  present_key / present_value have
max(total, past) rows.  When seq == total (a first prompt) no past is read: the new
keys start the present rows and attend causally, and query rows at or past t_b are
right padding whose output is unspecified (onnxruntime's too).  Otherwise row b keeps
its first t_b - seq past keys, appends the seq new ones, and query i sits at position
t_b - seq + i; present rows past t_b are zero.  do_rotary rotates Q and K at those
positions by cos_cache / sin_cache ([positions, rotary_dim / 2], rotary_interleaved
pairs (2i, 2i + 1) instead of (i, i + rotary_dim / 2)); padding rows of a first prompt
use position 1, as onnxruntime.  Attributes scale, softcap and local_window_size are
supported; smooth_softmax, position_ids, attention_bias, head_sink, query_seqlens,
quantized caches and qk_output are not."""

import numpy as np

from ... import _errors
from ._base import REQUIRED, Info
from .ms_attention import _MsAttention


class GroupQueryAttention(_MsAttention):
    attributes = {"num_heads": REQUIRED, "kv_num_heads": REQUIRED, "scale": 0.0, "softcap": 0.0,
                  "local_window_size": -1, "do_rotary": 0, "rotary_interleaved": 0, "smooth_softmax": 0,
                  "qk_output": 0}
    value_inputs = (6,)  # total_sequence_length sets the present rows

    def _plan(self, inputs):
        q = self.need(inputs, 0)
        opt = [inputs[i] if i < len(inputs) else None for i in range(1, 14)]
        k, v, past_k, past_v, lens, total = opt[:6]
        self._float32(inputs, (0, 1, 2, 3, 4, 7, 8))
        if self.a.smooth_softmax or self.a.qk_output or any(x is not None for x in opt[8:]) \
                or len(self.node.output) > 3:
            raise _errors.NotImplemented(f"{self.where}: smooth_softmax, qk_output, position_ids, attention_bias, "
                                         "head_sink, quantized caches and query_seqlens are not supported")
        cos, sin = opt[6], opt[7]
        if (cos is None) != (sin is None) or (cos is None) == bool(self.a.do_rotary):
            raise self.fail("cos_cache and sin_cache come together, exactly when do_rotary is 1")
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
        if cos is not None and (cos.rank != 2 or tuple(sin.shape) != tuple(cos.shape) or not 0 < 2 * cos.shape[1] <= d):
            raise self.fail(f"cos_cache {cos.shape} and sin_cache {sin.shape} must be [positions, rotary_dim / 2] "
                            f"with rotary_dim <= head_size {d}")
        t = int(np.asarray(self.value_of(inputs, 6)).reshape(-1)[0])
        if t < 1:
            raise _errors.InvalidArgument(f"{self.where}: total_sequence_length is {t}")
        rows = max(t, p)
        outs = [Info(q.dtype, (b, s, n * d)), Info(q.dtype, (b, nk, rows, d)), Info(q.dtype, (b, nk, rows, d))]
        return dict(b=b, s=s, kv=s, p=p, n=n, nk=nk, head_size=d, v_head_size=d, mask=0, outputs=outs,
                    rows=rows, first=int(t == s))

    def _params(self, r):
        params = super()._params(r)
        lws = int(self.a.local_window_size)
        params.update(kv_heads=r["nk"], unidirectional=1, local_window=lws - 1 if lws > 0 else -1,
                      softcap=float(self.a.softcap or 0.0), rotary=int(bool(self.a.do_rotary)),
                      rotary_interleaved=int(bool(self.a.rotary_interleaved)), present_len=r["rows"],
                      first_prompt=r["first"])
        return params
