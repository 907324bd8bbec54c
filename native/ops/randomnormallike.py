"""RandomNormalLike: RandomNormal with the shape of the input (whose values are not
read) and its type unless `dtype` is given (a float type either way)."""

from .randomuniformlike import RandomUniformLike


class RandomNormalLike(RandomUniformLike):
    attributes = {"dtype": None, "mean": 0.0, "scale": 1.0, "seed": None}

    def distribution(self):
        return {"a": float(self.a.mean), "b": float(self.a.scale)}
