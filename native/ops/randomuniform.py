"""RandomUniform: a tensor of the given `shape` and `dtype` (default float32) drawn
uniformly from [low, high).  With `seed` the values are reproducible (the same on
every run, whatever the thread count); without, every run draws afresh.  The
generator is mlrt's own (splitmix64, counter-based), so values never match another
runtime's, only the distribution does.

Random ops are not deterministic: constant folding must never run them ahead."""

import numpy as np
from onnx import TensorProto, helper

from ._base import REQUIRED, Info, Op

FLOAT_TYPES = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)


class _Random(Op):
    """What the generators share: the seed and the output float type."""

    params = "mlrt_random_params"
    deterministic = False  # outputs differ from run to run (unless seeded)
    tolerance = (0.0, 0.0)

    def float_dtype(self, code) -> np.dtype:
        if int(code) not in FLOAT_TYPES:
            raise self.fail(f"dtype {code} is not a float type (float16, float, double, bfloat16)")
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(code)))

    def seed(self) -> dict:
        seed = getattr(self.a, "seed", None)
        return {"has_seed": 0, "seed": 0.0} if seed is None else {"has_seed": 1, "seed": float(seed)}

    def shape_attr(self) -> tuple[int, ...]:
        shape = tuple(int(d) for d in self.a.shape)
        if any(d < 0 for d in shape):
            raise self.fail(f"shape {list(shape)} has a negative dim")
        return shape

    def pack(self, inputs, outputs):
        return {**self.seed(), **self.distribution()}

    def distribution(self) -> dict:
        return {}


class RandomUniform(_Random):
    attributes = {"dtype": TensorProto.FLOAT, "high": 1.0, "low": 0.0, "seed": None, "shape": REQUIRED}

    def infer(self, inputs):
        return [Info(self.float_dtype(self.a.dtype), self.shape_attr())]

    def distribution(self):
        return {"a": float(self.a.low), "b": float(self.a.high)}
