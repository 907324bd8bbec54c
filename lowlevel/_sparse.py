"""SparseTensor: onnxruntime's sparse tensors (COO and CSR), in host memory.

mlrt runs dense tensors only.  A SparseTensor holds its values and indices as numpy
arrays (numeric ones shared with the arrays given, not copied, as onnxruntime maps
them); OrtValue.ort_value_from_sparse_tensor wraps one, and feeding such an OrtValue
(or the SparseTensor itself) to a dense model input gives the session its dense form
(where onnxruntime refuses it).  Models whose inputs or outputs are sparse_tensor types
are refused with NotImplemented when fed.  Device copies (to_cuda) are not supported.
"""

from __future__ import annotations


import numpy as np

from .._errors import InvalidArgument, NotAvailable, NotImplemented
from ._enum import OrtEnum


class OrtSparseFormat(OrtEnum):
    ORT_SPARSE_UNDEFINED = 0
    ORT_SPARSE_COO = 1
    ORT_SPARSE_CSRC = 2
    ORT_SPARSE_BLOCK_SPARSE = 4


class SparseCooView:
    """The COO indices of a SparseTensor: indices() gives the linear indices (nnz,) or
    the coordinates (nnz, 2) it was made with."""

    def __init__(self, indices: np.ndarray):
        self._indices = indices

    def indices(self) -> np.ndarray:
        return self._indices


class SparseCsrView:
    """The CSR(C) indices of a SparseTensor: inner() the column of each value, outer()
    where each row starts in the values (rows + 1 entries)."""

    def __init__(self, inner: np.ndarray, outer: np.ndarray):
        self._inner, self._outer = inner, outer

    def inner(self) -> np.ndarray:
        return self._inner

    def outer(self) -> np.ndarray:
        return self._outer


class SparseBlockSparseView:
    """The block-sparse indices of a SparseTensor (mlrt makes no such tensors)."""

    def __init__(self, indices: np.ndarray):
        self._indices = indices

    def indices(self) -> np.ndarray:
        return self._indices


def _dense_shape(dense_shape, where: str) -> list[int]:
    try:
        dims = [int(d) for d in np.asarray(dense_shape).reshape(-1)]
    except (TypeError, ValueError):
        raise InvalidArgument(f"{where}: dense_shape {dense_shape!r} is not a list of integers") from None
    if any(d < 0 for d in dims):
        raise InvalidArgument(f"{where}: dense_shape {dims} has a negative dimension")
    return dims


def _values(values, where: str) -> np.ndarray:
    """The values as a 1-D array: numeric ones shared (no copy where they are contiguous),
    strings copied into a str array (onnxruntime's values() gives them so)."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise InvalidArgument(f"{where}: values must be a 1-D array, got shape {list(a.shape)}")
    if a.dtype.kind in "US" or (a.dtype.kind == "O" and all(isinstance(v, (str, bytes)) for v in a)):
        return np.array([v.decode() if isinstance(v, bytes) else v for v in a.tolist()], dtype=str) if a.size else \
            np.array([], dtype=str)
    if a.dtype.kind not in "biufc" and not _onnx_known(a.dtype):
        raise InvalidArgument(f"{where}: unsupported values data type {a.dtype}")
    return np.ascontiguousarray(a)


def _onnx_known(dtype) -> bool:
    from onnx import helper  # (imported on first use: it costs more than mlrt.lowlevel)
    try:
        helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        return True
    except (KeyError, TypeError, ValueError):
        return False


def _indices(indices, where: str, what: str) -> np.ndarray:
    a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        raise InvalidArgument(f"{where}: {what} must be integers (int64), got {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)  # (int64 given: shared)


def _on_host(ort_device, where: str) -> None:
    kind = ort_device._mlrt_device() if hasattr(ort_device, "_mlrt_device") else None
    if kind is None:
        raise InvalidArgument(f"{where}: ort_device must be an OrtDevice (OrtDevice.make('cpu', 0)), "
                              f"got {type(ort_device).__name__}")
    if kind != "cpu":
        raise NotImplemented(f"{where}: mlrt keeps sparse tensors in host memory; make them on "
                             "OrtDevice.make('cpu', 0)")


class SparseTensor:
    """A sparse tensor in COO or CSR(C) format, in host memory: made with
    SparseTensor.sparse_coo_from_numpy or sparse_csr_from_numpy, as in onnxruntime."""

    def __init__(self, fmt: OrtSparseFormat, dense_shape: list[int], values: np.ndarray, *indices: np.ndarray):
        self._format = OrtSparseFormat(fmt)
        self._shape = list(dense_shape)
        self._values = values
        self._index = indices

    @classmethod
    def sparse_coo_from_numpy(cls, dense_shape, values, coo_indices, ort_device) -> "SparseTensor":
        """COO: `coo_indices` (int64) holds the linear index of each value (nnz,), or, for
        a 2-D dense shape, its (row, column) pairs as (nnz, 2).  Indices past the dense
        shape are refused (InvalidArgument)."""
        where = "sparse_coo_from_numpy"
        _on_host(ort_device, where)
        shape, vals = _dense_shape(dense_shape, where), _values(values, where)
        idx = _indices(coo_indices, where, "coo_indices")
        nnz = len(vals)
        if idx.ndim == 1:
            if len(idx) != nnz:
                raise InvalidArgument(f"{where}: {len(idx)} linear indices for {nnz} values")
            size = int(np.prod(shape, dtype=np.int64))
            if nnz and (idx.min() < 0 or idx.max() >= size):
                raise InvalidArgument(f"{where}: an index is outside the dense shape {shape} ({size} elements)")
        elif idx.ndim == 2:
            if len(shape) != 2 or idx.shape != (nnz, 2):
                raise InvalidArgument(f"{where}: 2-D coo_indices must be (nnz, 2) pairs for a 2-D dense shape; got "
                                      f"{list(idx.shape)} for {nnz} values and dense shape {shape}")
            if nnz and (idx.min() < 0 or (idx >= np.array(shape, np.int64)).any()):
                raise InvalidArgument(f"{where}: a coordinate is outside the dense shape {shape}")
        else:
            raise InvalidArgument(f"{where}: coo_indices must be 1-D or 2-D, got shape {list(idx.shape)}")
        return cls(OrtSparseFormat.ORT_SPARSE_COO, shape, vals, idx)

    @classmethod
    def sparse_csr_from_numpy(cls, dense_shape, values, inner_indices, outer_indices, ort_device) -> "SparseTensor":
        """CSR for a 2-D dense shape (rows, cols): `inner_indices` the column of each
        value, `outer_indices` (rows + 1 entries, int64) where each row's values start."""
        where = "sparse_csr_from_numpy"
        _on_host(ort_device, where)
        shape, vals = _dense_shape(dense_shape, where), _values(values, where)
        inner = _indices(inner_indices, where, "inner_indices")
        outer = _indices(outer_indices, where, "outer_indices")
        if len(shape) != 2:
            raise InvalidArgument(f"{where}: CSR needs a 2-D dense shape, got {shape}")
        nnz = len(vals)
        if inner.ndim != 1 or len(inner) != nnz:
            raise InvalidArgument(f"{where}: inner_indices must have one entry per value ({nnz}), "
                                  f"got shape {list(inner.shape)}")
        if nnz and outer.ndim == 1 and outer.size == 0:
            raise InvalidArgument(f"{where}: outer_indices is empty for {nnz} values")
        if outer.size and (outer.ndim != 1 or len(outer) != shape[0] + 1):
            raise InvalidArgument(f"{where}: outer_indices must have rows + 1 = {shape[0] + 1} entries, "
                                  f"got shape {list(outer.shape)}")
        if outer.size and (outer[0] != 0 or outer[-1] != nnz or (np.diff(outer) < 0).any()):
            raise InvalidArgument(f"{where}: outer_indices must rise from 0 to the number of values ({nnz})")
        if nnz and (inner.min() < 0 or inner.max() >= shape[1]):
            raise InvalidArgument(f"{where}: a column index is outside the dense shape {shape}")
        return cls(OrtSparseFormat.ORT_SPARSE_CSRC, shape, vals, inner, outer)

    def values(self) -> np.ndarray:
        """The non-zero values (numeric ones: the array given, shared)."""
        return self._values

    def _wrong_format(self, want: str):
        return NotAvailable(f"This sparse tensor does not contain {want} format (it is {self._format.name})")

    def as_coo_view(self) -> SparseCooView:
        if self._format != OrtSparseFormat.ORT_SPARSE_COO:
            raise self._wrong_format("COO")
        return SparseCooView(self._index[0])

    def as_csrc_view(self) -> SparseCsrView:
        if self._format != OrtSparseFormat.ORT_SPARSE_CSRC:
            raise self._wrong_format("CSR(C)")
        return SparseCsrView(*self._index)

    def as_blocksparse_view(self) -> SparseBlockSparseView:
        if self._format != OrtSparseFormat.ORT_SPARSE_BLOCK_SPARSE:
            raise self._wrong_format("BlockSparse")
        return SparseBlockSparseView(self._index[0])

    def to_cuda(self, ort_device) -> "SparseTensor":
        raise NotImplemented("SparseTensor.to_cuda: mlrt has no CUDA device, and keeps sparse tensors in host memory")

    def format(self) -> OrtSparseFormat:
        return self._format

    def dense_shape(self) -> list[int]:
        return list(self._shape)

    def _element_type(self) -> int:
        from onnx import TensorProto, helper
        dt = self._values.dtype
        return TensorProto.STRING if dt.kind in "OUS" else helper.np_dtype_to_tensor_dtype(dt)

    def data_type(self) -> str:
        from onnx import helper
        name = helper.tensor_dtype_to_string(self._element_type()).replace("TensorProto.", "").lower()
        return f"sparse_tensor({name})"

    def device_name(self) -> str:
        return "cpu"

    def _dense(self) -> np.ndarray:
        """The dense tensor: zeros (empty strings) with the values put in place."""
        vals = self._values
        dense = np.zeros(self._shape, dtype=object if vals.dtype.kind in "US" else vals.dtype)
        if vals.dtype.kind in "US":
            dense[...] = ""
        if self._format == OrtSparseFormat.ORT_SPARSE_COO:
            idx = self._index[0]
            if idx.ndim == 1:
                dense.reshape(-1)[idx] = vals
            else:
                dense[idx[:, 0], idx[:, 1]] = vals
        elif self._format == OrtSparseFormat.ORT_SPARSE_CSRC:
            inner, outer = self._index
            if len(vals):
                rows = np.repeat(np.arange(self._shape[0]), np.diff(outer))
                dense[rows, inner] = vals
        else:
            raise NotImplemented(f"densifying a {self._format.name} sparse tensor")
        return dense

    def __repr__(self) -> str:
        return (f"SparseTensor({self._format.name}, {self.data_type()}, dense_shape={self._shape}, "
                f"nnz={len(self._values)})")
