"""OrtValue and IOBinding: tensors that live on a device, and runs bound to them.

An OrtValue holds a host array ("cpu") or a tensor in a device provider's memory
(its `device` kind, e.g. "opencl"; "gpu" names the GPU provider).  Binding device
values as inputs and asking for device outputs lets a pipeline keep its data on the
device between runs: only what a CPU node needs is copied.  Devices are reached only
through their provider's memory methods (allocate, to_device, to_host, owns).
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from .._errors import InvalidArgument, NotImplemented
from ..native.providers import _base as providers


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
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise InvalidArgument(f"{where}: {dtype!r} is not an element type ({exc})") from None
    if dt.kind not in "biufV" or dt.itemsize not in (1, 2, 4, 8):
        device = provider.name.removesuffix("ExecutionProvider")
        raise InvalidArgument(f"{where}: {dt} tensors cannot live on the {device} device (numbers and bool can)")
    return dt


def _shape(shape, where: str) -> tuple:
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{where}: shape {shape!r} is not a list of integers") from None
    if any(d < 0 for d in dims):
        raise InvalidArgument(f"{where}: shape {list(dims)} has a negative dimension")
    return dims


def _type_string(dtype) -> str:
    t = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return f"tensor({helper.tensor_dtype_to_string(t).replace('TensorProto.', '').lower()})"


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
        shape = _shape(shape, "ortvalue_from_shape_and_type")
        p = _provider(device_type)
        if p is not None:
            dtype = _device_dtype(element_type, "ortvalue_from_shape_and_type", p)
            return OrtValue(p.allocate(shape, dtype), p)
        try:
            return OrtValue(np.zeros(shape, element_type))
        except TypeError as exc:
            raise InvalidArgument(f"ortvalue_from_shape_and_type: {element_type!r} is not an element type ({exc})") from None

    def device_name(self) -> str:
        return self._provider.device if self._provider is not None else "cpu"

    def shape(self) -> list:
        return list(self._value.shape)

    def element_type(self):
        return np.dtype(self._value.dtype).type

    def data_type(self) -> str:
        return _type_string(self._value.dtype)

    def is_tensor(self) -> bool:
        return True

    def has_value(self) -> bool:
        return self._value is not None

    def numpy(self) -> np.ndarray:
        """The tensor as a host array (read back from the device if it lives there)."""
        return self._provider.to_host(self._value) if self._provider is not None else self._value

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
        raise NotImplemented("bind_input with a raw buffer pointer is not supported; bind an OrtValue "
                             "(bind_ortvalue_input) or a host array (bind_cpu_input)")

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type=None, shape=None,
                    buffer_ptr=None) -> None:
        if buffer_ptr is not None:
            raise NotImplemented("bind_output with a raw buffer pointer is not supported; bind an OrtValue")
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
                if list(np.shape(value)) != want.shape() or np.dtype(value.dtype) != np.dtype(want.element_type()):
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
