"""Attention: softmax(Q K^T * scale + bias) V over heads, with grouped key/value
heads (GQA/MQA), a bool or additive mask, causal masking, soft capping and a
key/value cache (past_key/past_value in, present_key/present_value out).

3-D inputs are [batch, seq, heads * head_size] (q_num_heads / kv_num_heads say how
many heads); 4-D ones [batch, heads, seq, head_size].  The kernel sees every input
as a 4-D per-head view.  Opset 24 adds nonpad_kv_seqlen (an external cache: keys
past it are masked, the causal frontier is offset by it), opset 25 sliding windows.

qk_matmul_output mode 0 is the raw Q K^T product (before the soft cap), as the
operator's documentation says (onnx.reference applies the soft cap there too)."""

from __future__ import annotations

import numpy as np

from .._lib import onnx_type
from ._base import Info, Launch, Op, View, broadcast_shape, broadcast_view, contiguous_strides

_SOFTMAX_TYPES = (1, 10, 11, 16)


def _head_view(shape, heads: int) -> View:
    """[batch, seq, heads * size] seen as [batch, heads, seq, size]."""
    b, s, hidden = shape
    size = hidden // heads
    return View((b, heads, s, size), (s * hidden, size, hidden, 1))


class _Attention(Op):
    attributes = {"is_causal": 0, "kv_num_heads": None, "q_num_heads": None, "qk_matmul_output_mode": 0,
                  "scale": None, "softcap": 0.0, "softmax_precision": None}
    params = "mlrt_attention_params"
    tolerance = (1e-4, 1e-5)
    windows = False  # left_window_size / right_window_size (opset 25)

    def _plan(self, inputs):
        q, k, v = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        opt = [inputs[i] if i < len(inputs) else None for i in range(3, 7)]
        mask, past_k, past_v, nonpad = opt
        dtype = np.dtype(q.dtype)
        if onnx_type(dtype) not in (1, 10, 11, 16):
            raise self.fail(f"needs float, double, float16 or bfloat16 inputs, not {dtype.name}")
        if np.dtype(k.dtype) != dtype or np.dtype(v.dtype) != dtype:
            raise self.fail("Q, K and V must share one element type")
        if not q.rank == k.rank == v.rank or q.rank not in (3, 4):
            raise self.fail(f"Q, K, V must all be 3-D or all 4-D, not of ranks {q.rank}, {k.rank}, {v.rank}")
        if q.rank == 3:
            hq, hkv = self.a.q_num_heads, self.a.kv_num_heads
            if not hq or not hkv or hq < 0 or hkv < 0:
                raise self.fail("3-D inputs need positive q_num_heads and kv_num_heads")
            for x, h, name in ((q, hq, "Q"), (k, hkv, "K"), (v, hkv, "V")):
                if x.shape[2] % h:
                    raise self.fail(f"{name}'s hidden size {x.shape[2]} is not a multiple of its {h} heads")
            views = [_head_view(q.shape, hq), _head_view(k.shape, hkv), _head_view(v.shape, hkv)]
        else:
            views = [View(tuple(x.shape), contiguous_strides(x.shape)) for x in (q, k, v)]
        (b, hq, sq, d), (bk, hkv, s, dk), (bv, hv, sv, dv) = (x.shape for x in views)
        if not b == bk == bv or hkv != hv or s != sv or d != dk:
            raise self.fail(f"Q {q.shape}, K {k.shape} and V {v.shape} do not fit together")
        if hkv == 0 or hq % hkv:
            raise self.fail(f"{hq} query heads cannot share {hkv} key/value heads")
        if (past_k is None) != (past_v is None):
            raise self.fail("past_key and past_value come together")
        p = 0
        if past_k is not None:
            if nonpad is not None:
                raise self.fail("nonpad_kv_seqlen cannot be combined with past_key/past_value")
            p = past_k.shape[2] if past_k.rank == 4 else -1
            if (np.dtype(past_k.dtype) != dtype or np.dtype(past_v.dtype) != dtype
                    or tuple(past_k.shape) != (b, hkv, p, d) or tuple(past_v.shape) != (b, hkv, p, dv)):
                raise self.fail(f"past_key {past_k.shape} / past_value {past_v.shape} do not fit "
                                f"[{b}, {hkv}, past, {d} / {dv}]")
        if nonpad is not None and (np.dtype(nonpad.dtype) != np.int64 or tuple(nonpad.shape) != (b,)):
            raise self.fail(f"nonpad_kv_seqlen must be int64 of shape ({b},)")
        total = p + s
        if mask is not None:
            mdt = np.dtype(mask.dtype)
            if mdt != np.bool_ and mdt != dtype:
                raise self.fail(f"attn_mask must be bool or {dtype.name}, not {mdt.name}")
            if not 1 <= mask.rank <= 4 or mask.shape[-1] > total:
                raise self.fail(f"attn_mask of shape {mask.shape} does not fit {total} keys")
            lead = broadcast_shape(mask.shape[:-1], (b, hq, sq), where=self.where)
            if lead != (b, hq, sq):
                raise self.fail(f"attn_mask of shape {mask.shape} does not broadcast to [{b}, {hq}, {sq}, keys]")
            views.append(broadcast_view(mask.shape, (b, hq, sq, mask.shape[-1])))
        sm = self.a.softmax_precision
        if sm is not None and sm not in _SOFTMAX_TYPES:
            raise self.fail(f"softmax_precision {sm} is not one of {_SOFTMAX_TYPES}")
        mode = self.a.qk_matmul_output_mode
        if mode not in (0, 1, 2, 3):
            raise self.fail(f"qk_matmul_output_mode {mode} is not 0, 1, 2 or 3")
        return dict(dtype=dtype, views=views, b=b, hq=hq, hkv=hkv, sq=sq, s=s, p=p, d=d, dv=dv, rank=q.rank)

    def infer(self, inputs):
        r = self._plan(inputs)
        dt, b, hq, hkv, sq, d, dv = (r[k] for k in ("dtype", "b", "hq", "hkv", "sq", "d", "dv"))
        total = r["p"] + r["s"]
        y = (b, sq, hq * dv) if r["rank"] == 3 else (b, hq, sq, dv)
        outs = [Info(dt, y), Info(dt, (b, hkv, total, d)), Info(dt, (b, hkv, total, dv)), Info(dt, (b, hq, sq, total))]
        return outs[:max(1, len(self.node.output))]

    def _windows(self):
        if not self.windows:
            return -1, -1
        left, right = int(self.a.left_window_size), int(self.a.right_window_size)
        if left < -1 or right < -1:
            raise self.fail(f"window sizes must be -1 or >= 0, not {left} / {right}")
        return left, right

    def launch(self, inputs, outputs):
        r = self._plan(inputs)
        dt = r["dtype"]
        scale = self.a.scale if self.a.scale is not None else 1.0 / np.sqrt(max(r["d"], 1e-300))
        with np.errstate(all="ignore"):
            scale_sqrt = float(np.asarray(np.sqrt(np.float64(scale))).astype(dt))
        left, right = self._windows()
        params = {"batch": r["b"], "q_heads": r["hq"], "kv_heads": r["hkv"], "q_len": r["sq"], "kv_len": r["s"],
                  "past_len": r["p"], "head_size": r["d"], "v_head_size": r["dv"],
                  "is_causal": int(bool(self.a.is_causal)),
                  "left_window": left, "right_window": right, "qk_mode": int(self.a.qk_matmul_output_mode),
                  "softmax_type": int(self.a.softmax_precision or onnx_type(dt)), "scale_sqrt": scale_sqrt,
                  "softcap": float(self.a.softcap or 0.0)}
        return Launch("Attention", params, dict(enumerate(r["views"])))


class Attention_23(_Attention):
    pass


class Attention_24(_Attention):
    pass


class Attention_25(_Attention):
    attributes = {**_Attention.attributes, "left_window_size": -1, "right_window_size": -1}
    windows = True
