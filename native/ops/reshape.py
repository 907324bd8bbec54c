"""Reshape: the same elements under a new shape (0 copies a dimension, -1 is inferred)."""

import numpy as np

from ._shape import _Reshape, ints


class Reshape(_Reshape):
    attributes = {"shape": None}  # opset 1-4: the shape is an attribute

    def target(self, inputs) -> list[int]:
        if self.a.shape is None:
            raise self.fail("attribute 'shape' is missing")
        return ints(self.a.shape)

    def out_shape(self, inputs, x):
        allowzero = getattr(self.a, "allowzero", 0)
        out, unknown = [], None
        for i, d in enumerate(self.target(inputs)):
            if d == -1:
                if unknown is not None:
                    raise self.fail("the shape has more than one -1")
                unknown = i
                out.append(1)
            elif d == 0 and not allowzero:
                if i >= x.rank:
                    raise self.fail(f"shape dimension {i} is 0 (copy) but the input has rank {x.rank}")
                out.append(x.shape[i])
            elif d < 0:
                raise self.fail(f"shape dimension {i} is {d}")
            else:
                out.append(d)
        if unknown is not None:
            known = int(np.prod(out, dtype=np.int64))
            if known == 0 or x.size % known:
                raise self.fail(f"cannot infer the -1 dimension turning {x.shape} into {self.target(inputs)}")
            out[unknown] = x.size // known
        return out


class Reshape_5(Reshape):
    attributes = {}
    value_inputs = (1,)

    def target(self, inputs):
        return ints(self.value_of(inputs, 1))


class Reshape_14(Reshape_5):
    attributes = {"allowzero": 0}
