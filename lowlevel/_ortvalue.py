"""OrtValue and IOBinding: tensors that live on a device, and runs bound to them.

An OrtValue holds a host array ("cpu") or a tensor in a device provider's memory
(its `device` kind, e.g. "opencl"; "gpu" names the GPU provider).  Binding device
values as inputs and asking for device outputs lets a pipeline keep its data on the
device between runs: only what a CPU node needs is copied.  Devices are reached only
through their provider's memory methods (allocate, to_device, to_host, owns).
"""

from __future__ import annotations

import ctypes
import math
import operator

import numpy as np

from .._errors import InvalidArgument, NotAvailable, NotImplemented
from ..native import providers
from ._sparse import SparseTensor


def _provider(device_type: str):
    """The provider whose memory `device_type` names (None for "cpu")."""
    kind = str(device_type).lower()
    if kind == "cpu":
        return None
    p = providers.for_device(kind)
    if p is None:
        raise InvalidArgument(f"unknown device_type '{device_type}' (use one of: {', '.join(providers.device_kinds())}"
                              f"{', gpu' if any(c.gpu for c in providers.available().values()) else ''})")
    return p


def _device_dtype(dtype, where: str, provider) -> np.dtype:
    """A dtype a device can hold: numbers and bool (not strings or objects)."""
    dt = _numpy_dtype(dtype, where)
    if dt.kind not in "biufV" or dt.itemsize not in (1, 2, 4, 8):
        device = provider.name.removesuffix("ExecutionProvider")
        raise InvalidArgument(f"{where}: {dt} tensors cannot live on the {device} device (numbers and bool can)")
    return dt


def _onnx_type(dtype) -> int:
    """The TensorProto element type of a numpy dtype (str, bytes and objects: STRING)."""
    from onnx import TensorProto, helper  # (imported on first use: it costs more than mlrt.lowlevel)
    dt = np.dtype(dtype)
    return TensorProto.STRING if dt.kind in "OUS" else helper.np_dtype_to_tensor_dtype(dt)


def _type_string(dtype) -> str:
    from onnx import helper
    return f"tensor({helper.tensor_dtype_to_string(_onnx_type(dtype)).replace('TensorProto.', '').lower()})"


def _numpy_dtype(element_type, where: str) -> np.dtype:
    """A numpy dtype from a numpy type or an ONNX element type number (TensorProto.BFLOAT16:
    the ml_dtypes type onnx maps it to)."""
    if isinstance(element_type, int) and not isinstance(element_type, bool):
        from onnx import helper
        try:
            return np.dtype(helper.tensor_dtype_to_np_dtype(element_type))
        except KeyError:
            raise InvalidArgument(f"{where}: {element_type} is not an ONNX element type "
                                  "(a TensorProto.DataType)") from None
    try:
        return np.dtype(element_type)
    except TypeError as exc:
        raise InvalidArgument(f"{where}: {element_type!r} is not an element type ({exc})") from None


class OrtValue:
    """A tensor on the host or in a device provider's memory."""

    def __init__(self, value, provider=None):
        self._value = value
        self._provider = provider if provider is not None else providers.owner_of(value)

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type: str = "cpu", device_id: int = 0) -> "OrtValue":
        array = np.asarray(numpy_obj)
        p = _provider(device_type)
        if p is not None:
            _device_dtype(array.dtype, "ortvalue_from_numpy", p)
            return OrtValue(p.to_device(array), p)
        return OrtValue(array)

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type: str = "cpu", device_id: int = 0) -> "OrtValue":
        shape = InvalidArgument.check_shape(shape, "ortvalue_from_shape_and_type")
        p = _provider(device_type)
        if p is not None:
            dtype = _device_dtype(element_type, "ortvalue_from_shape_and_type", p)
            return OrtValue(p.allocate(shape, dtype), p)
        return OrtValue(np.zeros(shape, _numpy_dtype(element_type, "ortvalue_from_shape_and_type")))

    @staticmethod
    def ortvalue_from_numpy_with_onnx_type(data, onnx_element_type: int) -> "OrtValue":
        """A host OrtValue over `data` (not copied) whose elements are read as the ONNX type
        `onnx_element_type` of the same size, e.g. uint16 bits as TensorProto.BFLOAT16
        (numpy() then gives the ml_dtypes array onnx uses for that type)."""
        where = "ortvalue_from_numpy_with_onnx_type"
        data = np.asarray(data)
        want = _numpy_dtype(int(onnx_element_type), where)
        if want.kind == "O" or data.dtype.kind in "OUS":
            raise InvalidArgument(f"{where}: string tensors cannot be reinterpreted; use ortvalue_from_numpy")
        if want.itemsize != data.dtype.itemsize:
            raise InvalidArgument(f"{where}: the array's items are {data.dtype.itemsize} byte(s) ({data.dtype}), "
                                  f"{_type_string(want)} needs {want.itemsize}")
        return OrtValue(data.view(want))

    @staticmethod
    def from_dlpack(data) -> "OrtValue":
        """A host OrtValue sharing the memory of a DLPack tensor (numpy, PyTorch on the CPU, ...);
        raw DLPack capsules and device tensors are not taken."""
        try:
            return OrtValue(np.from_dlpack(data))
        except (AttributeError, TypeError, RuntimeError, BufferError) as exc:
            raise InvalidArgument(f"from_dlpack: not a host tensor numpy can share ({exc})") from None

    @staticmethod
    def ort_value_from_sparse_tensor(sparse_tensor) -> "OrtValue":
        """An OrtValue holding `sparse_tensor` (a SparseTensor, kept as it is): fed to a
        session's dense input it is given in its dense form."""
        if not isinstance(sparse_tensor, SparseTensor):
            raise InvalidArgument(f"ort_value_from_sparse_tensor: expected a SparseTensor, got "
                                  f"{type(sparse_tensor).__name__}")
        return OrtValue(sparse_tensor, None)

    def device_name(self) -> str:
        return self._provider.device if self._provider is not None else "cpu"

    def shape(self) -> list:
        """The shape (a sparse tensor's: its dense shape)."""
        if isinstance(self._value, SparseTensor):
            return self._value.dense_shape()
        return list(self._value.shape)

    def element_type(self) -> int:
        """The ONNX element type (TensorProto.FLOAT is 1), as onnxruntime gives it."""
        if isinstance(self._value, SparseTensor):
            return self._value._element_type()
        return _onnx_type(self._value.dtype)

    def data_type(self) -> str:
        if isinstance(self._value, SparseTensor):
            return self._value.data_type()
        return _type_string(self._value.dtype)

    def data_ptr(self) -> int:
        """The address of the first element of a host tensor (0 when it has none)."""
        a = self._host("data_ptr")
        return int(a.ctypes.data) if a.size else 0

    def tensor_size_in_bytes(self) -> int:
        self._dense_only("tensor_size_in_bytes")
        return int(np.prod(self._value.shape, dtype=np.int64)) * np.dtype(self._value.dtype).itemsize

    def is_tensor(self) -> bool:
        return hasattr(self._value, "dtype") and hasattr(self._value, "shape")

    def is_tensor_sequence(self) -> bool:
        return isinstance(self._value, (list, tuple))

    def is_sparse_tensor(self) -> bool:
        return isinstance(self._value, SparseTensor)

    def as_sparse_tensor(self) -> SparseTensor:
        """The SparseTensor this OrtValue holds (NotAvailable for any other value)."""
        if not isinstance(self._value, SparseTensor):
            raise NotAvailable("as_sparse_tensor: This OrtValue does not contain SparseTensor (it holds a "
                               f"{self.data_type() if self.is_tensor() else type(self._value).__name__})")
        return self._value

    def _dense_only(self, what: str) -> None:
        if isinstance(self._value, SparseTensor):
            raise NotAvailable(f"{what}: this OrtValue holds a sparse tensor; use as_sparse_tensor()")

    def has_value(self) -> bool:
        return self._value is not None

    def numpy(self) -> np.ndarray:
        """The tensor as a host array (read back from the device if it lives there)."""
        self._dense_only("numpy")
        return self._provider.to_host(self._value) if self._provider is not None else self._value

    def native_value(self):
        """mlrt only: the value as mlrt holds it, not copied: a numpy array on the host, the
        provider's device array (with its dtype and shape) where it lives on a device;
        numpy() reads that one back."""
        return self._value

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = self.numpy()
        if dtype is not None and a.dtype != np.dtype(dtype):
            return a.astype(dtype)
        return a.copy() if copy else a

    def __dlpack__(self, **kwargs):
        return self._host("DLPack").__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._host("DLPack").__dlpack_device__()

    def _host(self, what: str) -> np.ndarray:
        self._dense_only(what)
        if self._provider is not None:
            raise NotImplemented(f"{what}: a tensor on the {self.device_name()} device is an opaque buffer; "
                                 "read it with numpy()")
        return self._value

    def update_inplace(self, np_arr) -> None:
        a = np.asarray(np_arr)
        v = self._value
        if tuple(a.shape) != tuple(v.shape) or a.dtype != v.dtype:
            raise InvalidArgument(f"update_inplace: got {a.dtype}{list(a.shape)}, the value is {v.dtype}{list(v.shape)}")
        if self._provider is not None:
            self._value = self._provider.to_device(a)  # the device copy replaces the old one
        else:
            v[...] = a

    def __repr__(self) -> str:
        return f"OrtValue({self.data_type()} {self.shape()} on {self.device_name()})"


def _at_address(where: str, device_type, element_type, shape, buffer_ptr) -> np.ndarray:
    """The host memory at `buffer_ptr` as an array of `element_type` and `shape` (no copy).
    Only host addresses: a device's buffers are bound as OrtValues."""
    if str(device_type).lower() != "cpu":
        raise NotImplemented(f"{where}: a raw pointer into {device_type} memory; bind an OrtValue made on that device "
                             "(bind_ortvalue_input / bind_ortvalue_output) instead")
    dtype = _numpy_dtype(element_type, where)
    if dtype.kind in "OUS":
        raise InvalidArgument(f"{where}: strings cannot be bound by address; use bind_cpu_input")
    try:
        dims = tuple(operator.index(d) for d in shape)
        address = operator.index(buffer_ptr)
    except TypeError:
        raise InvalidArgument(f"{where}: shape must be ints and buffer_ptr an int address, got {shape!r}, "
                              f"{buffer_ptr!r}") from None
    if any(d < 0 for d in dims):
        raise InvalidArgument(f"{where}: shape {list(dims)} has a negative dimension")
    count = math.prod(dims)
    if address <= 0 and count:
        raise InvalidArgument(f"{where}: buffer_ptr {address} is not an address")
    if not count:
        return np.empty(dims, dtype)
    memory = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(memory, dtype=dtype, count=count).reshape(dims)


def _ortvalue(value, where: str) -> OrtValue:
    if not isinstance(value, OrtValue):
        raise InvalidArgument(f"{where}: expected an OrtValue, got {type(value).__name__}")
    return value


class IOBinding:
    """Inputs and outputs bound to values or devices for run_with_iobinding()."""

    def __init__(self, session):
        self._session = session
        self._inputs: dict[str, object] = {}
        self._outputs: dict[str, str | OrtValue] = {}  # name -> device kind, or a value to fill
        self._results: list[OrtValue] = []

    def bind_cpu_input(self, name: str, arr_on_cpu) -> None:
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._inputs[name] = _ortvalue(ortvalue, f"input '{name}'")._value

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr) -> None:
        """Bind the `shape` tensor of `element_type` at host address `buffer_ptr` (an
        OrtValue's data_ptr(), a numpy array's ctypes.data): read in place when the run
        reads it, so that memory must hold it until then, as in onnxruntime."""
        self._inputs[name] = _at_address(f"bind_input('{name}')", device_type, element_type, shape, buffer_ptr)

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type=None, shape=None,
                    buffer_ptr=None) -> None:
        """Outputs stay on `device_type` ("cpu" or a provider's device, e.g. "opencl");
        with `buffer_ptr`, the output (of that element_type and shape) is written to
        that host address, which must stay valid until the run."""
        if buffer_ptr is not None:
            self._outputs[name] = OrtValue(_at_address(f"bind_output('{name}')", device_type, element_type, shape,
                                                       buffer_ptr))
            return
        _provider(device_type)  # an unknown device is refused here
        self._outputs[name] = str(device_type).lower()

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        self._outputs[name] = _ortvalue(ortvalue, f"output '{name}'")

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()
        self._results = []

    def synchronize_inputs(self) -> None:
        pass  # uploads are queued before the kernels that read them

    def synchronize_outputs(self) -> None:
        for p in {id(v._provider): v._provider for v in self._results if v._provider is not None}.values():
            p.synchronize()

    def get_outputs_names(self) -> list[str]:
        return list(self._outputs)

    def get_outputs(self) -> list[OrtValue]:
        return list(self._results)

    def get_outputs_as_ortvaluevector(self) -> list[OrtValue]:
        """The outputs of the last run (onnxruntime's OrtValueVector: here a list)."""
        return list(self._results)

    def copy_outputs_to_cpu(self) -> list[np.ndarray]:
        return [v.numpy() for v in self._results]

    # used by InferenceSession.run_with_iobinding
    def _run(self, run) -> None:
        names = list(self._outputs) or [o.name for o in self._session.get_outputs()]
        wanted = {n: self._outputs[n]._provider if isinstance(self._outputs.get(n), OrtValue) else
                  _provider(self._outputs.get(n, "cpu")) for n in names}
        results = run(names, dict(self._inputs), {n for n, p in wanted.items() if p is not None})
        out = []
        for name, value in zip(names, results):
            want, p = self._outputs.get(name), wanted[name]
            src = providers.owner_of(value)
            if src is not p:  # made in another memory than the one asked for: moved there
                value = src.to_host(value) if src is not None else value
                value = p.to_device(np.asarray(value)) if p is not None else value
            if isinstance(want, OrtValue):
                if list(np.shape(value)) != want.shape() or np.dtype(value.dtype) != np.dtype(want._value.dtype):
                    raise InvalidArgument(f"output '{name}' is {np.dtype(value.dtype)}{list(np.shape(value))}, the bound "
                                          f"OrtValue is {want.data_type()} {want.shape()}")
                if p is None:
                    want._value[...] = value
                else:
                    want._value = value  # the bound device value now holds the result
                out.append(want)
            else:
                out.append(OrtValue(value, p))
        self._results = out
