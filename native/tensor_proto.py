"""onnx TensorProto to numpy: element type names, the bytes a tensor's raw data takes,
an initializer's array (dense or sparse), and why one cannot be read."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InvalidModel

if TYPE_CHECKING:  # onnx is imported where a model is read (see graph.py)
    import onnx

def elem_name(elem: int) -> str:
    import onnx
    if not elem:
        return "undefined"
    try:
        return onnx.helper.tensor_dtype_to_string(elem).replace("TensorProto.", "").lower()
    except (KeyError, ValueError):
        raise InvalidModel(f"element type {elem} is not an ONNX type") from None

def tensor_nbytes(t: onnx.TensorProto) -> int | None:
    """Bytes of t's raw data (sub-byte types packed), None where that is not fixed."""
    import onnx
    count = 1
    for d in t.dims:
        count *= int(d)
    bits = {onnx.TensorProto.INT4: 4, onnx.TensorProto.UINT4: 4, onnx.TensorProto.INT2: 2,
            onnx.TensorProto.UINT2: 2}.get(t.data_type)
    if getattr(onnx.TensorProto, "FLOAT4E2M1", None) == t.data_type:
        bits = 4
    if bits:
        return (count * bits + 7) // 8
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type))
    except (KeyError, ValueError, TypeError):
        return None
    return None if dtype.kind in "OUS" else count * dtype.itemsize

@functools.cache
def _raw_types() -> dict:
    from onnx import TensorProto
    return {TensorProto.FLOAT: "<f4", TensorProto.DOUBLE: "<f8", TensorProto.INT64: "<i8", TensorProto.INT32: "<i4",
            TensorProto.FLOAT16: "<f2", TensorProto.UINT8: "u1", TensorProto.INT8: "i1"}


def array_of(t: onnx.TensorProto) -> np.ndarray:
    """An initializer's values: the common case (raw little-endian bytes of a plain numeric
    type, in the model) read straight from the parsed message; the rest by onnx."""
    from onnx import TensorProto, numpy_helper
    dtype = _raw_types().get(t.data_type)
    if dtype is None or t.data_location == TensorProto.EXTERNAL or not t.HasField("raw_data"):
        return numpy_helper.to_array(t)
    raw = t.raw_data
    count = 1
    for d in t.dims:
        count *= d
    if count * np.dtype(dtype).itemsize != len(raw):
        return numpy_helper.to_array(t)  # (onnx says what is wrong with it)
    return np.frombuffer(raw, dtype).astype(np.dtype(dtype).newbyteorder("="), copy=True).reshape(tuple(t.dims))


_SPARSE_DENSE_LIMIT = 1 << 32  # bytes a sparse initializer's dense form may take


def dense_of(t: onnx.SparseTensorProto) -> np.ndarray:
    """A sparse initializer's dense array: its values at its indices (linear, [NNZ], or
    one row of coordinates per value, [NNZ, rank]) in a tensor of its dims, zeros elsewhere."""
    from onnx import numpy_helper
    name = t.values.name
    try:
        values, indices = array_of(t.values), numpy_helper.to_array(t.indices)
    except Exception as exc:
        raise InvalidModel(f"sparse initializer '{name}' cannot be read ({exc})") from None
    dims = tuple(int(d) for d in t.dims)
    if any(d < 0 for d in dims) or values.ndim != 1 or indices.dtype.kind not in "iu":
        raise InvalidModel(f"sparse initializer '{name}': dims {list(dims)}, values of shape {list(values.shape)} "
                           f"and indices of {indices.dtype} are not a sparse tensor (ONNX wants [NNZ] values and "
                           "int64 indices)")
    count = int(np.prod(dims, dtype=np.float64))
    if count * values.dtype.itemsize > _SPARSE_DENSE_LIMIT:
        raise InvalidModel(f"sparse initializer '{name}': its dense form {list(dims)} would take more than "
                           f"{_SPARSE_DENSE_LIMIT >> 30} GiB")
    nnz = values.shape[0]
    if indices.shape == (nnz,):
        flat = indices.astype(np.int64)
    elif indices.shape == (nnz, len(dims)):
        if nnz and ((indices < 0) | (indices >= np.array(dims))).any():
            raise InvalidModel(f"sparse initializer '{name}': an index is outside its dims {list(dims)}")
        flat = np.ravel_multi_index(indices.T, dims).astype(np.int64) if nnz else np.zeros(0, np.int64)
    else:
        raise InvalidModel(f"sparse initializer '{name}': indices of shape {list(indices.shape)} for {nnz} values "
                           f"(ONNX wants [{nnz}] or [{nnz}, {len(dims)}])")
    if nnz and (flat.min() < 0 or flat.max() >= count):
        raise InvalidModel(f"sparse initializer '{name}': an index is outside its dims {list(dims)}")
    dense = np.full(count, "", object) if values.dtype == object else np.zeros(count, values.dtype)
    dense[flat] = values
    return dense.reshape(dims)


def why_unreadable(t: onnx.TensorProto, exc: Exception) -> str:
    """Why initializer t cannot be read, in its own terms where they say more than onnx's."""
    import onnx
    try:
        kind = f"its {list(t.dims)} {elem_name(t.data_type)} tensor"
        need = tensor_nbytes(t) if t.data_type else None
    except InvalidModel:  # (an element type ONNX does not have)
        return str(exc)
    if t.HasField("raw_data") and need is not None and len(t.raw_data) != need:
        return f"its raw data has {len(t.raw_data)} bytes, where {kind} needs {need}"
    try:
        field = onnx.helper.tensor_dtype_to_field(t.data_type)
    except Exception:
        return str(exc)
    held = [fd.name for fd, _ in t.ListFields() if fd.name.endswith("_data") and fd.name != field]
    if held and not len(getattr(t, field)):
        return f"its values are in {held[0]}, where {kind} keeps them in {field}"
    return str(exc)


__all__ = ["array_of", "dense_of", "elem_name", "tensor_nbytes", "why_unreadable"]
