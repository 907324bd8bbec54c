"""onnxruntime's remaining module-level names: package facts (version, package_name,
cuda_version), preload_dlls, print_debug_info, set_global_thread_pool_sizes,
set_default_logger_callback, copy_tensors, the plugin-provider library calls (refused:
mlrt has no plugin providers), and SessionIOBinding / OrtValueVector, the classes
onnxruntime's Python layer wraps."""

from __future__ import annotations

import logging
import operator
import os
import platform

import numpy as np

from .._errors import InvalidArgument, NotImplemented
from ._logging import SEVERITY_LEVELS, logger
from ._ortvalue import IOBinding, OrtValue

package_name = "mlrt"  # (onnxruntime: "onnxruntime", "onnxruntime-gpu", ...)
cuda_version = ""  # mlrt is built without CUDA, as onnxruntime's CPU package ("")


ONNXRUNTIME_API = "1.32.0"  # the onnxruntime whose Python API mlrt.lowlevel implements (and is tested against)


def api_version() -> str:
    """onnxruntime's version whose API this is, with mlrt's own version as its PEP 440
    local label: "1.32.0+mlrt.0.1.0".  Apps that compare onnxruntime.__version__ (as a
    string, by packaging.version, or by its first numbers) see the API level they can
    use; the label says what is really installed."""
    from .._version import __version__
    return f"{ONNXRUNTIME_API}+mlrt.{__version__.replace('+', '.').replace('-', '.')}"


def __getattr__(name: str):
    """`version` and `__version__` (api_version()), made when first asked for (reading the
    installed metadata costs a fifth of importing mlrt.lowlevel)."""
    if name in ("version", "__version__"):
        return api_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def preload_dlls(cuda: bool = True, cudnn: bool = True, msvc: bool = True, directory=None) -> None:
    """Nothing to load: mlrt needs no CUDA, cuDNN or MSVC libraries (its runtime loads
    its own library, and OpenCL's loader, when a session needs them)."""


def print_debug_info() -> None:
    """Print what helps to debug an install: mlrt's version and build, the platform,
    and the library search path."""
    from ._compat import get_build_info
    print(f"{package_name} version: {api_version()}")
    print("platform:", platform.platform())
    print(get_build_info())
    if platform.system() == "Linux":
        print(f"\nEnvironment variable:\nLD_LIBRARY_PATH={os.environ.get('LD_LIBRARY_PATH', '(unset)')}")
    elif platform.system() == "Windows":
        print(f"\nEnvironment variable:\nPATH={os.environ.get('PATH', '(unset)')}")


_global_pool_sizes = (0, 0)


def set_global_thread_pool_sizes(intra_op_num_threads: int = 0, inter_op_num_threads: int = 0) -> None:
    """Kept, and ignored: onnxruntime shares global pools among sessions that ask for them
    (use_per_session_threads = False); every mlrt session has its own pool, sized by
    SessionOptions.intra_op_num_threads."""
    global _global_pool_sizes
    sizes = []
    for what, n in (("intra_op_num_threads", intra_op_num_threads), ("inter_op_num_threads", inter_op_num_threads)):
        try:
            n = operator.index(n)
        except TypeError:
            raise InvalidArgument(f"set_global_thread_pool_sizes: {what} must be an int, got {n!r}") from None
        if n < 0:
            raise InvalidArgument(f"set_global_thread_pool_sizes: {what} must be >= 0, got {n}")
        sizes.append(n)
    _global_pool_sizes = tuple(sizes)


_PLUGINS = ("mlrt has no plugin execution providers: its providers (CPU, OpenCL) are built in; see "
            "get_available_providers()")


def register_execution_provider_library(registration_name: str, path: str) -> None:
    raise NotImplemented(f"register_execution_provider_library('{registration_name}', '{path}'): {_PLUGINS}")


def unregister_execution_provider_library(registration_name: str) -> None:
    raise NotImplemented(f"unregister_execution_provider_library('{registration_name}'): {_PLUGINS}")


class _CallbackHandler(logging.Handler):
    """Hands each record of the "mlrt" logger to an onnxruntime-style logging callback."""

    def __init__(self, callback):
        super().__init__()
        self.callback = callback
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy:  # a message logged by the callback itself goes nowhere
            return
        severity = {logging.DEBUG: 0, logging.INFO: 1, logging.WARNING: 2, logging.ERROR: 3}.get(
            record.levelno, 4 if record.levelno > logging.ERROR else 0)
        self._busy = True
        try:
            self.callback(severity, "mlrt", "", f"{record.pathname}:{record.lineno}", record.getMessage())
        except Exception:  # noqa: BLE001 - reported, as onnxruntime reports through sys.unraisablehook
            self.handleError(record)
        finally:
            self._busy = False


_handler: _CallbackHandler | None = None


def set_default_logger_callback(callback, severity: int = 2) -> None:
    """Send what mlrt logs (the "mlrt" logger) to `callback(severity, category, logid,
    code_location, message)` instead of Python's logging handlers, and set the default
    severity (0 verbose ... 4 fatal); None restores them, leaving the severity as it is."""
    global _handler
    try:
        severity = operator.index(severity)
    except TypeError:
        raise InvalidArgument(f"set_default_logger_callback: severity must be an int, got {severity!r}") from None
    if severity not in SEVERITY_LEVELS:
        raise InvalidArgument(f"set_default_logger_callback: severity {severity} is out of range 0-4")
    if callback is not None and not callable(callback):
        raise InvalidArgument(f"set_default_logger_callback: callback must be callable or None, got {callback!r}")
    log = logger()
    if _handler is not None:
        log.removeHandler(_handler)
        _handler = None
        log.propagate = True
    if callback is not None:
        _handler = _CallbackHandler(callback)
        log.addHandler(_handler)
        log.propagate = False  # (the callback replaces the default sink, as in onnxruntime)
        log.setLevel(SEVERITY_LEVELS[severity])


def copy_tensors(src, dst, stream=None) -> None:
    """Copy each OrtValue of `src` into the OrtValue of `dst` at the same place (same
    element type and shape; host or device).  `stream` must be None: mlrt has no sync
    streams."""
    if stream is not None:
        raise NotImplemented("copy_tensors: mlrt has no sync streams; pass stream=None")
    src, dst = list(src), list(dst)
    if len(src) != len(dst):
        raise InvalidArgument(f"copy_tensors: {len(src)} source(s) but {len(dst)} destination(s)")
    for i, (s, d) in enumerate(zip(src, dst)):
        if not isinstance(s, OrtValue) or not isinstance(d, OrtValue):
            raise InvalidArgument(f"copy_tensors: entry {i} is not a pair of OrtValues")
        d.update_inplace(s.numpy())


class SessionIOBinding(IOBinding):
    """onnxruntime's binding class beneath IOBinding: SessionIOBinding(session) is an
    IOBinding of that InferenceSession."""


class OrtValueVector(list):
    """A list of OrtValues with onnxruntime's OrtValueVector methods (what
    run_with_ortvaluevector fills and IOBinding.get_outputs_as_ortvaluevector gives)."""

    def push_back(self, value: OrtValue) -> None:
        if not isinstance(value, OrtValue):
            raise InvalidArgument(f"OrtValueVector.push_back: expected an OrtValue, got {type(value).__name__}")
        self.append(value)

    def push_back_batch(self, arrays, shapes=None, element_types=None) -> None:
        """Append host OrtValues over the arrays given (numpy arrays, or objects numpy can read)."""
        for a in arrays:
            self.append(a if isinstance(a, OrtValue) else OrtValue.ortvalue_from_numpy(np.asarray(a)))

    def reserve(self, n: int) -> None:
        """Nothing to reserve (a Python list grows as needed)."""

    def shrink_to_fit(self) -> None:
        """Nothing to shrink (a Python list)."""

    def element_type_at(self, index: int) -> int:
        return self[index].element_type()

    def dlpack_at(self, index: int):
        return self[index].__dlpack__()

    def to_dlpacks(self, to_tensor=None) -> list:
        capsules = [v.__dlpack__() for v in self]
        return [to_tensor(c) for c in capsules] if to_tensor is not None else capsules
