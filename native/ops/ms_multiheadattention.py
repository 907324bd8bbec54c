"""MultiHeadAttention (com.microsoft, as onnxruntime's CPU kernel): softmax(Q K^T * scale
+ mask) V over num_heads heads of separate query [batch, seq, hidden], key and value
[batch, kv_seq, hidden / v_hidden], with an optional bias [hidden + hidden + v_hidden]
added to each.  key_padding_mask (int32) is [batch] key lengths, [batch, total] or
[batch, seq, total] 1 / 0; masked scores get mask_filter_value added, later keys are
dropped when unidirectional.  attention_bias as Attention's; past_key / past_value
[batch, heads, past, head_size] -> present_key / present_value [batch, heads, total, ...].
Not supported: packed QKV / KV inputs, 4-D key / value, past_sequence_length,
cache_indirection and the qk output."""

import numpy as np

from ... import _errors
from ._base import REQUIRED, Info
from .ms_attention import _MsAttention


class MultiHeadAttention(_MsAttention):
    attributes = {"num_heads": REQUIRED, "mask_filter_value": -10000.0, "scale": 0.0, "unidirectional": 0}

    def _plan(self, inputs):
        q = self.need(inputs, 0)
        opt = [inputs[i] if i < len(inputs) else None for i in range(1, 10)]
        k, v, bias, mask, abias, past_k, past_v, past_len, cache_ind = opt
        self._float32(inputs, (0, 1, 2, 3, 5, 6, 7))
        if k is None or v is None or q.rank != 3 or k.rank != 3 or v.rank != 3:
            raise _errors.NotImplemented(f"{self.where}: only 3-D query, key and value are supported")
        if past_len is not None or cache_ind is not None or (len(self.node.output) > 3 and self.node.output[3]):
            raise _errors.NotImplemented(f"{self.where}: past_sequence_length, cache_indirection and the qk "
                                         "output are not supported")
        n = int(self.a.num_heads)
        b, s, hidden = q.shape
        if n <= 0 or hidden % n or k.shape[0] != b or v.shape[0] != b or k.shape[2] != hidden \
                or v.shape[1] != k.shape[1] or v.shape[2] % n:
            raise self.fail(f"query {q.shape}, key {k.shape} and value {v.shape} do not fit {n} heads")
        kv, d, dv = k.shape[1], hidden // n, v.shape[2] // n
        if bias is not None and tuple(bias.shape) != (2 * hidden + v.shape[2],):
            raise self.fail(f"bias of shape {bias.shape} must be [{2 * hidden + v.shape[2]}]")
        if (past_k is None) != (past_v is None):
            raise self.fail("past_key and past_value come together")
        p = 0
        if past_k is not None:
            p = past_k.shape[2] if past_k.rank == 4 else -1
            if tuple(past_k.shape) != (b, n, p, d) or tuple(past_v.shape) != (b, n, p, dv):
                raise self.fail(f"past_key {past_k.shape} / past_value {past_v.shape} must be "
                                f"[{b}, {n}, past, {d} / {dv}]")
        total = p + kv
        kind = self._mask_kind(mask, b, s, total, lengths_ok=(1,))
        self._attention_bias(abias, b, n, s, total)
        outs = [Info(q.dtype, (b, s, v.shape[2])), Info(q.dtype, (b, n, total, d)), Info(q.dtype, (b, n, total, dv))]
        return dict(b=b, s=s, kv=kv, p=p, n=n, head_size=d, v_head_size=dv, mask=kind, outputs=outs)
