"""RandomUniformLike: RandomUniform with the shape of the input (whose values are not
read) and its type unless `dtype` is given (a float type either way)."""

from ._base import Info
from .randomuniform import _Random


class RandomUniformLike(_Random):
    attributes = {"dtype": None, "high": 1.0, "low": 0.0, "seed": None}

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if self.a.dtype is None and x.dtype.kind != "f" and x.dtype.name != "bfloat16":
            raise self.fail(f"the input is {x.dtype}: give a float `dtype` for the output")
        dtype = x.dtype if self.a.dtype is None else self.float_dtype(self.a.dtype)
        return [Info(dtype, x.shape)]

    def distribution(self):
        return {"a": float(self.a.low), "b": float(self.a.high)}
