"""Attention (com.microsoft, as onnxruntime's CPU kernel): multi-head self-attention with
the Q/K/V projection packed into one weight matrix [input_hidden, hidden + hidden +
v_hidden] (qkv_hidden_sizes when V's differs) and bias; softmax(Q K^T * scale + mask) V.

mask_index (int32): [batch] key lengths, [2 * batch] ends then starts, [batch, total]
or [batch, seq, total] 1 / 0; masked scores get mask_filter_value added (onnxruntime's
choice, not -inf), while unidirectional drops later keys from the softmax.  attention_bias [batch or 1,
heads or 1, seq, total] is added too.  past (2, batch, heads, past_len, head_size) ->
present (2, batch, heads, total, head_size).  Not supported: 4-D masks,
past_present_share_buffer / past_sequence_length, do_rotary.

The C kernel projects into scratch and hands per-head views to the ai.onnx Attention
kernel; `_MsAttention` holds what MultiHeadAttention shares."""

import numpy as np

from ... import _errors
from ._base import REQUIRED, Info, Launch, Op

MASK_END, MASK_END_START, MASK_RAW_2D, MASK_RAW_3D = 1, 2, 3, 4


class _MsAttention(Op):
    domain = "com.microsoft"
    params = "mlrt_ms_attention_params"
    tolerance = (1e-4, 1e-5)

    def _float32(self, inputs, indices):
        for i in indices:
            if i < len(inputs) and inputs[i] is not None and np.dtype(inputs[i].dtype) != np.float32:
                raise _errors.NotImplemented(f"{self.where}: input {i} is {np.dtype(inputs[i].dtype).name}; "
                                             "only float32 is supported (as onnxruntime's CPU kernel)")

    def _mask_kind(self, mask, b, s, total, lengths_ok=(1, 2)):
        if mask is None:
            return 0
        if np.dtype(mask.dtype) != np.int32:
            raise self.fail(f"mask_index must be int32, not {np.dtype(mask.dtype).name}")
        shape = tuple(mask.shape)
        if shape == (b,) and 1 in lengths_ok:
            return MASK_END
        if shape == (2 * b,) and 2 in lengths_ok:
            return MASK_END_START
        if shape == (b, total):
            return MASK_RAW_2D
        if shape == (b, s, total):
            return MASK_RAW_3D
        if mask.rank == 4 or mask.rank == 1:
            raise _errors.NotImplemented(f"{self.where}: a mask of shape {shape} is not supported")
        raise self.fail(f"mask of shape {shape} does not fit batch {b}, sequence {s}, total {total}")

    def _attention_bias(self, ab, b, heads, s, total):
        if ab is None:
            return
        shape = tuple(ab.shape)
        if (np.dtype(ab.dtype) != np.float32 or ab.rank != 4 or shape[0] not in (1, b) or shape[1] not in (1, heads)
                or shape[2:] != (s, total)):
            raise self.fail(f"attention_bias of shape {shape} must be float32 [{b} or 1, {heads} or 1, {s}, {total}]")

    def _params(self, r):
        d = r["head_size"]
        scale = self.a.scale if self.a.scale else 1.0 / np.sqrt(d)
        return {"batch": r["b"], "q_len": r["s"], "kv_len": r["kv"], "past_len": r["p"], "heads": r["n"],
                "kv_heads": r["n"], "head_size": d, "v_head_size": r["v_head_size"], "in_hidden": r.get("din", 0),
                "mask_kind": r["mask"], "unidirectional": int(bool(getattr(self.a, "unidirectional", 0))), "local_window": -1,
                "rotary": 0, "rotary_interleaved": 0, "scale": float(scale),
                "mask_filter_value": float(getattr(self.a, "mask_filter_value", -10000.0)), "softcap": 0.0}

    def infer(self, inputs):
        r = self._plan(inputs)
        return r["outputs"][:max(1, len(self.node.output))]

    def launch(self, inputs, outputs):
        return Launch(self.op_type, self._params(self._plan(inputs)))


class Attention(_MsAttention):
    attributes = {"num_heads": REQUIRED, "qkv_hidden_sizes": None, "unidirectional": 0, "scale": 0.0,
                  "mask_filter_value": -10000.0, "do_rotary": 0, "past_present_share_buffer": 0,
                  "rotary_embedding_dim": 0}

    def _plan(self, inputs):
        x, w = self.need(inputs, 0), self.need(inputs, 1)
        opt = [inputs[i] if i < len(inputs) else None for i in range(2, 7)]
        bias, mask, past, abias, past_len = opt
        self._float32(inputs, (0, 1, 2, 4, 5))
        if self.a.do_rotary or self.a.past_present_share_buffer or past_len is not None:
            raise _errors.NotImplemented(f"{self.where}: do_rotary, past_present_share_buffer and "
                                         "past_sequence_length are not supported")
        n = int(self.a.num_heads)
        if x.rank != 3 or w.rank != 2 or w.shape[0] != x.shape[2]:
            raise self.fail(f"input {x.shape} must be [batch, seq, hidden] and weights {w.shape} [hidden, 3 * hidden]")
        b, s, din = x.shape
        width = w.shape[1]
        sizes = list(self.a.qkv_hidden_sizes) if self.a.qkv_hidden_sizes is not None else [width // 3] * 3
        if (len(sizes) != 3 or sizes[0] != sizes[1] or sum(sizes) != width or n <= 0
                or any(h <= 0 or h % n for h in sizes)):
            raise self.fail(f"qkv_hidden_sizes {sizes} do not split the weights' {width} columns over {n} heads")
        if bias is not None and tuple(bias.shape) != (width,):
            raise self.fail(f"bias of shape {bias.shape} must be [{width}]")
        d, dv = sizes[0] // n, sizes[2] // n
        p = 0
        if past is not None:
            p = past.shape[3] if past.rank == 5 else -1
            if tuple(past.shape) != (2, b, n, p, d) or d != dv:
                raise self.fail(f"past of shape {past.shape} must be [2, {b}, {n}, past, {d}] (and V's heads as K's)")
        total = p + s
        kind = self._mask_kind(mask, b, s, total)
        self._attention_bias(abias, b, n, s, total)
        outs = [Info(x.dtype, (b, s, sizes[2])), Info(x.dtype, (2, b, n, total, d))]
        if len(self.node.output) > 1 and self.node.output[1] and d != dv:
            raise self.fail("present needs V's head size to equal K's")
        return dict(b=b, s=s, kv=s, p=p, n=n, head_size=d, v_head_size=dv, din=din, mask=kind, outputs=outs)
