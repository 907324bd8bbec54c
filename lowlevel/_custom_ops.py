"""Custom operators: a session's own operators, from Python functions or a C library.

`SessionOptions.register_custom_op(domain, op_type, compute, infer=None)` and
`SessionOptions.register_custom_ops_library(path)` record `CustomOp`s; a session made
with those options runs the nodes of each (domain, op_type) on the host, one call a
node, and everything else as before (docs/custom_ops.md).  The session hands the
operator classes made here to `native.ops.custom` while it is made and while it runs.

A Python operator:
    compute(*inputs, **attributes) -> array, or a tuple/list of arrays (one a node output)
    infer(*input_types, **attributes) -> (dtype, shape), or a list of them, one an output;
        an input type is (numpy dtype, shape tuple) (None for an absent input); a dtype
        or a dim of None in what infer returns takes anything
A C operator: mlrt_custom_op_def in native/include/mlrt.h.

What the user's code gets wrong (it raises, returns something else than arrays, the
wrong number of them, or arrays infer did not announce) is an MlrtError naming the
node; the session stays usable.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._errors import InvalidArgument, MlrtError, NoSuchFile, RuntimeLoadError
from .. import native
from ..native.ops import HostOp, attribute_value
from ..native.plan import memory

log = logging.getLogger("mlrt")

ENTRY_POINT = "mlrt_register_custom_ops"
_RESERVED_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class CustomOp:
    """One custom operator: nodes of (`domain`, `op_type`) run `compute`; `infer`, when
    given, says what each output must be (checked after compute).  `library` is the
    path of the C library it came from ("" for a Python function)."""

    domain: str
    op_type: str
    compute: Callable
    infer: Callable | None = None
    library: str = ""

    def __post_init__(self):
        what = f"custom operator {self.domain!r}::{self.op_type!r}"
        if not isinstance(self.domain, str) or not isinstance(self.op_type, str) or not self.op_type:
            raise InvalidArgument(f"{what}: domain and op_type must be strings, op_type not empty")
        if self.domain in _RESERVED_DOMAINS:
            raise InvalidArgument(f"{what}: the domain must be one of your own (e.g. 'com.example'), not the "
                                  "default ONNX domain, whose operators mlrt implements")
        if not callable(self.compute):
            raise InvalidArgument(f"{what}: compute must be callable, got {type(self.compute).__name__}")
        if self.infer is not None and not callable(self.infer):
            raise InvalidArgument(f"{what}: infer must be callable or None, got {type(self.infer).__name__}")

    @property
    def key(self) -> tuple[str, str]:
        return self.domain, self.op_type


def operator_classes(custom_ops: dict) -> dict:
    """(domain, op_type) -> an operator class (native.ops) for each CustomOp."""
    return {key: type(f"Custom_{spec.op_type}", (_CustomNode,), {"domain": spec.domain, "spec": spec})
            for key, spec in custom_ops.items()}


class _CustomNode(HostOp):
    """A node of a custom operator: run on the host by `spec.compute`.  Never computed
    ahead of time (the user's function may not be pure)."""

    spec: CustomOp = None
    deterministic = False
    tolerance = (1e-5, 1e-6)

    def __init__(self, node, opset: int):
        super().__init__(node, opset)
        self.attrs = {a.name: attribute_value(a) for a in node.attribute}
        self.where = f"node '{self.name}' (custom operator {self.spec.domain}::{self.spec.op_type})"

    def run_host(self, values: list, runtime) -> list:
        spec = self.spec
        n_out = len(self.node.output)
        expected = None
        if spec.infer is not None:
            types = [(v.dtype, tuple(v.shape)) if isinstance(v, np.ndarray) else None for v in values]
            try:
                expected = spec.infer(*types, **self.attrs)
            except MlrtError:
                raise
            except Exception as exc:
                raise MlrtError(f"{self.where}: its infer function raised {type(exc).__name__}: {exc}") from exc
            expected = _output_types(self, expected, n_out)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s: computing from %s", self.where,
                      ", ".join(f"{v.dtype}{list(v.shape)}" if isinstance(v, np.ndarray) else repr(v)
                                for v in values) or "no inputs")
        try:
            if isinstance(spec.compute, _CKernel):
                result = spec.compute.run(values, n_out)
            else:
                result = spec.compute(*values, **self.attrs)
        except _CError as exc:
            raise MlrtError(f"{self.where}: {exc}") from None
        except MlrtError:
            raise
        except Exception as exc:
            raise MlrtError(f"{self.where}: its compute function raised {type(exc).__name__}: {exc}") from exc
        outs = _outputs(self, result, n_out)
        if expected is not None:
            for i, (out, (dtype, shape)) in enumerate(zip(outs, expected)):
                if dtype is not None and out.dtype != dtype:
                    raise MlrtError(f"{self.where}: output {i} is {out.dtype}, but infer said {dtype}")
                if shape is not None and (len(shape) != out.ndim
                                          or any(d is not None and d != n for d, n in zip(shape, out.shape))):
                    want = [d if d is not None else "?" for d in shape]
                    raise MlrtError(f"{self.where}: output {i} has shape {list(out.shape)}, but infer said {want}")
        # outputs the runtime owns: contiguous and not sharing memory with an input
        inputs = [v for v in values if isinstance(v, np.ndarray)]
        return [np.array(o, copy=True) if not o.flags.c_contiguous or any(np.may_share_memory(o, v) for v in inputs)
                else o for o in outs]


def _outputs(op: _CustomNode, result, n_out: int) -> list:
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(outs) != n_out:
        raise MlrtError(f"{op.where}: compute returned {len(outs)} output(s), the node has {n_out}")
    for i, o in enumerate(outs):
        if isinstance(o, np.generic):
            outs[i] = np.asarray(o)
        elif not isinstance(o, np.ndarray):
            raise MlrtError(f"{op.where}: output {i} from compute is a {type(o).__name__}, not a numpy array")
    return outs


def _output_types(op: _CustomNode, expected, n_out: int) -> list:
    if isinstance(expected, tuple) and len(expected) == 2 and not isinstance(expected[0], tuple):
        expected = [expected]  # one (dtype, shape)
    try:
        items = list(expected)
        types = []
        for item in items:
            dtype, shape = item
            types.append((None if dtype is None else np.dtype(dtype),
                          None if shape is None else tuple(None if d is None else int(d) for d in shape)))
    except (TypeError, ValueError) as exc:
        raise MlrtError(f"{op.where}: infer must return (dtype, shape) or a list of them, one per output; "
                        f"got {expected!r} ({exc})") from None
    if len(types) != n_out:
        raise MlrtError(f"{op.where}: infer returned {len(types)} output type(s), the node has {n_out}")
    return types


# -- C libraries ------------------------------------------------------------------------------
_API = {}  # "api", "callbacks": the mlrt_custom_op_api handed to libraries, kept while the process lives
_API_LOCK = threading.Lock()
_errors = threading.local()  # .message: what a library passed to api->set_error
_libraries: dict[str, ctypes.CDLL] = {}  # real path -> the loaded library (never unloaded)


def _ffi():
    ffi = native.ffi()
    try:
        ffi.typeof("mlrt_custom_op_api")
    except Exception:
        raise RuntimeLoadError(f"the runtime at {native.runtime().path} predates custom operator libraries "
                               "(no mlrt_custom_op_api in its mlrt.h): use a runtime of this mlrt version") from None
    return ffi


def _api(ffi):
    with _API_LOCK:
        if not _API:
            def register_op(registry, definition):
                return ffi.from_handle(registry).add(definition)

            def set_error(message):
                _errors.message = ffi.string(message).decode(errors="replace") if message else ""

            api = ffi.new("mlrt_custom_op_api *")
            # (the types of the fields: the out-of-line FFI parses only names it declares)
            callbacks = [ffi.callback(ffi.typeof(api.register_op), register_op, error=1),
                         ffi.callback(ffi.typeof(api.set_error), set_error)]
            api.version = int(native.enum_value("MLRT_CUSTOM_OP_API_VERSION"))
            api.abi_version = int(native.lib().mlrt_abi_version())
            api.register_op, api.set_error = callbacks
            _API.update(api=api, callbacks=callbacks)
        return _API["api"]


def _take_error() -> str:
    message = getattr(_errors, "message", "")
    _errors.message = ""
    return message


class _Registry:
    """What one library's entry point registers."""

    def __init__(self, ffi, path: str):
        self.ffi, self.path = ffi, path
        self.ops: list[CustomOp] = []
        self.problem = ""

    def add(self, definition) -> int:
        ffi = self.ffi
        try:
            if definition == ffi.NULL or definition.op_type == ffi.NULL or definition.compute == ffi.NULL:
                raise InvalidArgument("a definition without op_type or compute")
            domain = ffi.string(definition.domain).decode() if definition.domain != ffi.NULL else ""
            op_type = ffi.string(definition.op_type).decode()
            kernel = _CKernel(ffi, self.path, definition.infer, definition.compute, definition.user_data)
            self.ops.append(CustomOp(domain, op_type, kernel, None, self.path))
            return 0
        except Exception as exc:  # (nothing may raise through C)
            self.problem = self.problem or str(exc)
            return 1


def load_library(path) -> list[CustomOp]:
    """The operators a custom operator library registers (loading it runs its code)."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgument(f"register_custom_ops_library: the path must be a str, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise NoSuchFile(f"register_custom_ops_library: no file at {path}")
    real = os.path.realpath(path)
    ffi = _ffi()
    library = _libraries.get(real)
    if library is None:
        try:
            library = ctypes.CDLL(real, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            raise InvalidArgument(f"register_custom_ops_library: {path} cannot be loaded as a shared library "
                                  f"({exc})") from None
        _libraries[real] = library
    try:
        address = ctypes.cast(getattr(library, ENTRY_POINT), ctypes.c_void_p).value
    except AttributeError:
        raise InvalidArgument(f"register_custom_ops_library: {path} does not export {ENTRY_POINT} (declare it "
                              "as in docs/custom_ops.md, with default visibility)") from None
    entry = ffi.cast("mlrt_register_custom_ops_fn", address)
    registry = _Registry(ffi, path)
    handle = ffi.new_handle(registry)
    _take_error()
    status = entry(_api(ffi), handle)
    message = _take_error() or registry.problem
    if status != 0:
        raise InvalidArgument(f"register_custom_ops_library: {ENTRY_POINT} of {path} failed with status {status}"
                              + (f": {message}" if message else ""))
    if registry.problem:
        raise InvalidArgument(f"register_custom_ops_library: {path} registered an operator mlrt refuses: "
                              f"{registry.problem}")
    log.info("custom operator library %s: %s", path,
             ", ".join(f"{op.domain}::{op.op_type}" for op in registry.ops) or "no operators")
    return registry.ops


class _CError(Exception):
    """What went wrong in a C custom operator (the node adds its name)."""


class _CKernel:
    """compute() of a C custom operator: infer, allocate, compute, through the library's
    function pointers."""

    def __init__(self, ffi, library, infer, compute, user_data):
        self.ffi, self.library = ffi, library
        self.infer, self.compute, self.user_data = infer, compute, user_data

    def __call__(self, *values, **attributes):
        """For a call from Python (one output): the outputs of compute."""
        return self.run(list(values), 1)

    def run(self, values: list, n_out: int) -> list:
        ffi = self.ffi
        arrays = []
        for i, v in enumerate(values):
            if v is not None and (not isinstance(v, np.ndarray) or native.onnx_type(v.dtype) == 0
                                  or v.ndim > native.MAX_RANK):
                raise _CError(f"input {i} is {_describe(v)}; a C custom operator takes numeric tensors of "
                              f"rank <= {native.MAX_RANK}")
            arrays.append(None if v is None else np.ascontiguousarray(v))
        n_in = len(arrays)
        inputs = ffi.new("mlrt_tensor[]", max(n_in, 1))
        for t, a in zip(inputs, arrays):
            if a is not None:
                _describe_tensor(ffi, t, a, a.shape)
        outputs = ffi.new("mlrt_tensor[]", max(n_out, 1))
        if self.infer != ffi.NULL:
            self._call(self.infer, "infer", inputs, n_in, outputs, n_out)
            shapes = []
            for k in range(n_out):
                t = outputs[k]
                if not 0 <= t.rank <= native.MAX_RANK:
                    raise _CError(f"its infer function gave output {k} the rank {t.rank}")
                shape = tuple(int(t.shape[d]) for d in range(t.rank))
                if any(d < 0 for d in shape):
                    raise _CError(f"its infer function gave output {k} the shape {list(shape)}")
                try:
                    dtype = native.np_type(int(t.dtype))
                except Exception:
                    dtype = None
                if dtype is None or native.onnx_type(dtype) == 0:
                    raise _CError(f"its infer function gave output {k} the element type {int(t.dtype)}, "
                                  "not one of mlrt_dtype's numeric types")
                shapes.append((dtype, shape))
        else:
            if not arrays or arrays[0] is None:
                raise _CError("it has no infer function and no input 0 to take the output type from")
            shapes = [(arrays[0].dtype, arrays[0].shape)] * n_out
        results = [memory.allocate(shape, dtype, f"custom operator output {k}")  # (the session's memory limit)
                   for k, (dtype, shape) in enumerate(shapes)]
        for t, r in zip(outputs, results):
            _describe_tensor(ffi, t, r, r.shape)
        self._call(self.compute, "compute", inputs, n_in, outputs, n_out)
        return results

    def _call(self, fn, what, inputs, n_in, outputs, n_out) -> None:
        _take_error()
        status = fn(self.user_data, inputs, n_in, outputs, n_out)
        message = _take_error()
        if status != 0:
            raise _CError(f"its {what} function ({self.library}) failed with status {status}"
                          + (f": {message}" if message else ""))


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"a {v.dtype} tensor"
    return "a sequence" if isinstance(v, list) else type(v).__name__


def _describe_tensor(ffi, t, array: np.ndarray, shape) -> None:
    t.dtype = native.onnx_type(array.dtype)
    t.rank = array.ndim
    stride = 1
    for d in reversed(range(array.ndim)):
        t.shape[d] = int(shape[d])
        t.strides[d] = stride
        stride *= int(shape[d])
    t.data = ffi.cast("void *", array.ctypes.data) if array.size else ffi.NULL
