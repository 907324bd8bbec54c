"""RandomNormal: a tensor of the given `shape` and `dtype` (default float32) drawn
from the normal distribution N(mean, scale^2) (Box-Muller on mlrt's own generator;
see RandomUniform for seeding)."""

from onnx import TensorProto

from ._base import REQUIRED, Info
from .randomuniform import _Random


class RandomNormal(_Random):
    attributes = {"dtype": TensorProto.FLOAT, "mean": 0.0, "scale": 1.0, "seed": None, "shape": REQUIRED}

    def infer(self, inputs):
        return [Info(self.float_dtype(self.a.dtype), self.shape_attr())]

    def distribution(self):
        return {"a": float(self.a.mean), "b": float(self.a.scale)}
