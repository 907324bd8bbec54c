"""LinearAttention: recurrent (linear) attention over packed [B, T, heads * d] query,
key and value, with a [B, kv_heads, dk, dv] state carried in past_state /
present_state (zeros if absent).  Per token: gated rules decay the state by
exp(decay) (per head, or per key dim), the write is k (x) v ("linear", "gated") or
k (x) beta * (v - S^T k) ("delta", "gated_delta"), and every query head of a kv
head's group reads o = scale * q^T S (scale 0 means 1 / sqrt(dk)).  The state is
float32 inside; chunk_size is a tuning hint with no effect."""

import numpy as np

from ._base import REQUIRED, Info, Op

RULES = {"linear": (0, 0), "gated": (1, 0), "delta": (0, 1), "gated_delta": (1, 1)}


class LinearAttention(Op):
    attributes = {"chunk_size": 64, "kv_num_heads": REQUIRED, "q_num_heads": REQUIRED, "scale": 0.0,
                  "update_rule": "gated_delta"}
    params = "mlrt_linear_attention_params"
    tolerance = (1e-4, 1e-5)

    def resolve(self, inputs):
        q, k, v = self.need(inputs, 0), self.need(inputs, 1), self.need(inputs, 2)
        past, decay, beta = (inputs[i] if len(inputs) > i else None for i in (3, 4, 5))
        if self.a.update_rule not in RULES:
            raise self.fail(f"update_rule must be one of {', '.join(RULES)}, got {self.a.update_rule!r}")
        gated, delta = RULES[self.a.update_rule]
        hq, hkv = int(self.a.q_num_heads), int(self.a.kv_num_heads)
        if hq <= 0 or hkv <= 0 or hq % hkv:
            raise self.fail(f"q_num_heads ({hq}) must be a positive multiple of kv_num_heads ({hkv})")
        if q.rank != 3 or k.rank != 3 or v.rank != 3:
            raise self.fail("query, key and value must be rank 3 (B, T, heads * d)")
        b, t = q.shape[:2]
        if q.shape[2] % hq or v.shape[2] % hkv:
            raise self.fail(f"query's last dim {q.shape[2]} / value's {v.shape[2]} do not split into the heads")
        dk, dv = q.shape[2] // hq, v.shape[2] // hkv
        if k.shape != (b, t, hkv * dk) or v.shape[:2] != (b, t):
            raise self.fail(f"key must be [{b}, {t}, {hkv * dk}] and value [{b}, {t}, {hkv} * dv], "
                            f"got {list(k.shape)} and {list(v.shape)}")
        if (decay is not None) != bool(gated) or (beta is not None) != bool(delta):
            raise self.fail(f"update_rule '{self.a.update_rule}' {'needs' if gated else 'forbids'} decay and "
                            f"{'needs' if delta else 'forbids'} beta")
        if decay is not None and (decay.rank != 3 or decay.shape[:2] != (b, t) or decay.shape[2] not in (hkv, hkv * dk)):
            raise self.fail(f"decay must be [{b}, {t}, {hkv}] or [{b}, {t}, {hkv * dk}], got {list(decay.shape)}")
        if beta is not None and (beta.rank != 3 or beta.shape[:2] != (b, t) or beta.shape[2] not in (hkv, 1)):
            raise self.fail(f"beta must be [{b}, {t}, {hkv}] or [{b}, {t}, 1], got {list(beta.shape)}")
        if past is not None and past.shape != (b, hkv, dk, dv):
            raise self.fail(f"past_state must be [{b}, {hkv}, {dk}, {dv}], got {list(past.shape)}")
        if any(x is not None and x.dtype != q.dtype for x in (k, v, decay, beta)):
            raise self.fail(f"key, value, decay and beta must have query's type {q.dtype}")
        scale = float(self.a.scale) or (1.0 / np.sqrt(dk) if dk else 1.0)
        params = {"batch": b, "steps": t, "q_heads": hq, "kv_heads": hkv, "dk": dk, "dv": dv, "gated": gated,
                  "delta": delta, "decay_per_key": int(decay is not None and decay.shape[2] == hkv * dk and dk != 1),
                  "beta_per_head": int(beta is not None and beta.shape[2] == hkv), "scale": scale}
        return params, (past.dtype if past is not None else q.dtype)

    def infer(self, inputs):
        p, state_dtype = self.resolve(inputs)
        q = inputs[0]
        return [Info(q.dtype, (p["batch"], p["steps"], p["q_heads"] * p["dv"])),
                Info(state_dtype, (p["batch"], p["kv_heads"], p["dk"], p["dv"]))]

    def pack(self, inputs, outputs):
        return self.resolve(inputs)[0]
