"""FlexAttention (ai.onnx.preview): scaled dot-product attention over rank-4 Q [B, Hq,
L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] (GQA: query head h reads kv head
h // (Hq / Hkv)) with optional modifier subgraphs: score_mod on the scores before
the softmax and prob_mod on the probabilities after it (each (B, Hq, L, S) ->
same).  Q and K are each pre-scaled by sqrt(scale) (default scale 1 / sqrt(E)); the
softmax and the product with V run in softmax_precision (default float32, or double
for double inputs), the result is cast back to V's type.

A host op: its modifier subgraphs run through `runtime.run_subgraph` (their ops on
the C kernels); the two batched products and the softmax around them are numpy's
for now, like the reference's -- the C kernel path is the Attention family's.
"""

import numpy as np
from onnx import TensorProto, helper

from ._host import _HostOp

PRECISIONS = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)


class FlexAttention(_HostOp):
    domain = "ai.onnx.preview"
    attributes = {"prob_mod": None, "scale": None, "score_mod": None, "softmax_precision": None}
    tolerance = (1e-5, 1e-6)

    def _modify(self, graph, x, runtime, what):
        if graph is None:
            return x
        if runtime is None:
            raise self.fail(f"{what} needs a runtime to run its subgraph")
        (out,) = runtime.run_subgraph(graph, [x])
        out = np.asarray(out)
        if out.shape != x.shape:
            raise self.bad(f"{what} returned shape {list(out.shape)}, expected {list(x.shape)}")
        return out.astype(x.dtype, copy=False)

    def run_host(self, values, runtime):
        q, k, v = (self.tensor(values, i, n) for i, n in enumerate(("Q", "K", "V")))
        if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
            raise self.bad(f"Q, K and V must be rank 4, got {list(q.shape)}, {list(k.shape)}, {list(v.shape)}")
        if not (q.dtype == k.dtype == v.dtype) or q.dtype.kind != "f" and q.dtype.name != "bfloat16":
            raise self.bad(f"Q, K and V must share a float type, got {q.dtype}, {k.dtype}, {v.dtype}")
        b, hq, _, e = q.shape
        if k.shape[0] != b or v.shape[0] != b or k.shape[3] != e or k.shape[1:3] != v.shape[1:3]:
            raise self.bad(f"K {list(k.shape)} and V {list(v.shape)} do not fit Q {list(q.shape)}")
        hkv = k.shape[1]
        if hkv < 1 or hq % hkv:
            raise self.bad(f"Q's {hq} heads are not a multiple of K/V's {hkv}")
        if hq != hkv:
            k, v = np.repeat(k, hq // hkv, axis=1), np.repeat(v, hq // hkv, axis=1)
        scale = 1.0 / np.sqrt(e) if self.a.scale is None else float(self.a.scale)
        root = np.array(np.sqrt(np.float32(scale)), dtype=q.dtype)
        scores = np.matmul(q * root, np.swapaxes(k * root, -1, -2))
        if self.a.softmax_precision is not None:
            if int(self.a.softmax_precision) not in PRECISIONS:
                raise self.fail(f"softmax_precision {self.a.softmax_precision} is not a float type")
            compute = np.dtype(helper.tensor_dtype_to_np_dtype(int(self.a.softmax_precision)))
        else:
            compute = q.dtype if q.dtype == np.float64 or q.dtype == np.float32 else np.dtype(np.float32)
        scores = self._modify(self.a.score_mod, scores.astype(compute), runtime, "score_mod")
        with np.errstate(invalid="ignore", over="ignore"):
            e_s = np.exp(scores - scores.max(axis=-1, keepdims=True))
            probs = e_s / e_s.sum(axis=-1, keepdims=True)
        probs = self._modify(self.a.prob_mod, probs.astype(compute, copy=False), runtime, "prob_mod")
        return [np.matmul(probs, v.astype(compute)).astype(v.dtype)]
