"""BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel.

Inference uses the given mean and var.  Training-mode statistics (the batch's mean
and biased variance, with momentum-blended running values as extra outputs) are
used when asked for: training_mode=1 from opset 14, or, before it, when the node
wants any output after Y.  Before opset 9, spatial=0 gives every (channel, position)
its own parameters."""

import numpy as np

from ._base import Info, Op
from ._reduce import NORM_FLOATS


class BatchNormalization(Op):
    attributes = {"epsilon": 1e-5, "momentum": 0.9, "is_test": 0, "spatial": 1, "consumed_inputs": None}
    params = "mlrt_batchnorm_params"
    tolerance = (1e-4, 1e-5)
    _FLOATS = NORM_FLOATS

    def training(self) -> bool:
        return any(self.node.output[1:])

    def spatial(self) -> bool:
        return bool(getattr(self.a, "spatial", 1))

    def infer(self, inputs):
        x = self.need(inputs, 0)
        ps = [self.need(inputs, i) for i in range(1, 5)]
        if x.rank < 2:
            raise self.fail(f"X must have rank >= 2 (N, C, ...), got shape {x.shape}")
        if np.dtype(x.dtype) not in self._FLOATS or any(np.dtype(p.dtype) not in self._FLOATS for p in ps):
            raise self.fail("X, scale, B, mean and var must be float or double")
        c = x.shape[1]
        want = (c,) if self.spatial() else (c, *x.shape[2:])
        for name, p in zip(("scale", "B", "mean", "var"), ps):
            if p.size != int(np.prod(want)) or (self.spatial() and p.rank != 1):
                raise self.fail(f"{name} has shape {p.shape}, expected {want}")
        outs = [Info(x.dtype, x.shape)]
        for name in self.node.output[1:]:
            outs.append(Info(self.stats_dtype(inputs), ps[2].shape) if name else None)
        if self.training() and not self.spatial():
            raise self.fail("training-mode statistics with spatial=0 are not implemented")
        return outs

    def stats_dtype(self, inputs):
        return inputs[0].dtype

    def pack(self, inputs, outputs):
        return {"epsilon": float(self.a.epsilon), "momentum": float(self.a.momentum),
                "training": int(self.training()), "per_element": int(not self.spatial())}


class BatchNormalization_6(BatchNormalization):
    attributes = {"epsilon": 1e-5, "momentum": 0.9, "is_test": 0, "spatial": 1}


class BatchNormalization_7(BatchNormalization):
    attributes = {"epsilon": 1e-5, "momentum": 0.9, "spatial": 1}


class BatchNormalization_9(BatchNormalization):
    attributes = {"epsilon": 1e-5, "momentum": 0.9}


class BatchNormalization_14(BatchNormalization):
    attributes = {"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0}

    def training(self) -> bool:
        if not self.a.training_mode and any(self.node.output[1:]):
            raise self.fail("running_mean / running_var are outputs of training_mode=1 only")
        return bool(self.a.training_mode)

    def stats_dtype(self, inputs):
        return inputs[3].dtype
