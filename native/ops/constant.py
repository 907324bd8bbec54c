"""Constant: a tensor given by exactly one of its value attributes."""

import numpy as np
from onnx import numpy_helper

from ._base import Info, Op


def _dense(sparse) -> np.ndarray:
    """A SparseTensorProto as a dense array."""
    values = numpy_helper.to_array(sparse.values)
    indices = numpy_helper.to_array(sparse.indices).astype(np.int64)
    shape = tuple(int(d) for d in sparse.dims)
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=values.dtype)
    if indices.ndim == 2:
        indices = np.ravel_multi_index(tuple(indices.T), shape) if indices.size else indices.reshape(-1)
    out[indices.reshape(-1)] = values.reshape(-1)
    return out.reshape(shape)


class Constant(Op):
    kernel = None
    attributes = {"value": None, "sparse_value": None, "value_float": None, "value_floats": None,
                  "value_int": None, "value_ints": None, "value_string": None, "value_strings": None}

    def infer(self, inputs):
        given = {k: v for k, v in vars(self.a).items() if v is not None}
        if len(given) != 1:
            raise self.fail(f"needs exactly one value attribute, got {sorted(given) or 'none'}")
        (key, v), = given.items()
        if key == "value":
            value = np.asarray(v)
        elif key == "sparse_value":
            value = _dense(v)
        elif key in ("value_float", "value_floats"):
            value = np.array(v, dtype=np.float32)
        elif key in ("value_int", "value_ints"):
            value = np.array(v, dtype=np.int64)
        else:
            value = np.array(v, dtype=object)
        return [Info(value.dtype, tuple(value.shape), value)]
