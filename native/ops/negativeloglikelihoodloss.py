"""NegativeLogLikelihoodLoss: loss[i, d...] = -input[i, target[i, d...], d...] * weight[target],
0 where target == ignore_index; reduction "none" keeps that [N, d...] tensor, "sum"
adds it up, "mean" divides the sum by the summed weights (by the count of targets
not ignored, without weights).  Input is [N, C] or [N, C, d1, ..., dk]."""

from __future__ import annotations

import numpy as np

from .._lib import enum_value, onnx_type
from ._base import Info, Op
from ._reduce import prod

# reduction -> the constants of kernels/loss.h (the numbers live there)
_REDUCTIONS = {"none": "MLRT_LOSS_NONE", "sum": "MLRT_LOSS_SUM", "mean": "MLRT_LOSS_MEAN"}


class _Loss(Op):
    """The shared semantics of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss."""

    attributes = {"ignore_index": None, "reduction": "mean"}
    params = "mlrt_loss_params"
    tolerance = (1e-4, 1e-5)
    max_outputs = 1

    def _check(self, inputs):
        x, t = self.need(inputs, 0), self.need(inputs, 1)
        w = inputs[2] if len(inputs) > 2 else None
        if onnx_type(x.dtype) not in (1, 10, 11, 16):
            raise self.fail(f"needs float, double, float16 or bfloat16 scores, not {np.dtype(x.dtype).name}")
        if np.dtype(t.dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise self.fail(f"target must be int32 or int64, not {np.dtype(t.dtype).name}")
        if x.rank < 2:
            raise self.fail(f"scores must be [N, C, ...], not of shape {x.shape}")
        if tuple(t.shape) != (x.shape[0],) + tuple(x.shape[2:]):
            raise self.fail(f"target of shape {t.shape} does not fit scores of shape {x.shape}")
        if w is not None and (np.dtype(w.dtype) != np.dtype(x.dtype) or tuple(w.shape) != (x.shape[1],)):
            raise self.fail(f"weight must be a {np.dtype(x.dtype).name} vector of {x.shape[1]} classes")
        if self.a.reduction not in _REDUCTIONS:
            raise self.fail(f"reduction must be 'none', 'sum' or 'mean', not {self.a.reduction!r}")
        if len(self.node.output) > self.max_outputs:
            raise self.fail(f"has at most {self.max_outputs} outputs")
        return x, t

    def infer(self, inputs):
        x, t = self._check(inputs)
        loss = Info(x.dtype, tuple(t.shape) if self.a.reduction == "none" else ())
        return [loss, Info(x.dtype, tuple(x.shape))][:max(1, len(self.node.output))]

    def pack(self, inputs, outputs):
        x = inputs[0]
        ii = self.a.ignore_index
        return {"n": int(x.shape[0]), "classes": int(x.shape[1]), "d": prod(x.shape[2:]),
                "reduction": enum_value(_REDUCTIONS[self.a.reduction]), "has_ignore": int(ii is not None),
                "ignore_index": int(ii) if ii is not None else 0}


class NegativeLogLikelihoodLoss(_Loss):
    pass
