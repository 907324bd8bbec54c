"""onnxruntime's module-level names that are not classes of mlrt.lowlevel's own modules:
package facts (version, package_name, cuda_version, get_build_info, print_debug_info),
the default logger (severity, verbosity, callback), set_seed, get_all_providers,
set_global_thread_pool_sizes, preload_dlls, telemetry, has_collective_ops, copy_tensors,
the plugin-provider library calls (refused: mlrt has no plugin providers), and
SessionIOBinding / OrtValueVector, the classes onnxruntime's Python layer wraps.
Installing mlrt.lowlevel as the `onnxruntime` module is _compat.py."""

from __future__ import annotations

import logging
import operator
import os
import platform

import numpy as np

from .. import distribution
from .._errors import InvalidArgument, MlrtError, NotImplemented
from ..native import providers
from ._logging import SEVERITY_LEVELS, logger
from ._ortvalue import IOBinding, OrtValue

log = logger()  # the "mlrt" logger; sessions and runs set their own severity (_logging.py)

package_name = "mlrt"  # (onnxruntime: "onnxruntime", "onnxruntime-gpu", ...)
cuda_version = ""  # mlrt is built without CUDA, as onnxruntime's CPU package ("")


ONNXRUNTIME_API = "1.32.0"  # the onnxruntime whose Python API mlrt.lowlevel implements (and is tested against)


def api_version() -> str:
    """onnxruntime's version whose API this is, with mlrt's own version as its PEP 440
    local label: "1.32.0+mlrt.0.1.0".  Apps that compare onnxruntime.__version__ (as a
    string, by packaging.version, or by its first numbers) see the API level they can
    use; the label says what is really installed."""
    from .. import __version__
    return f"{ONNXRUNTIME_API}+mlrt.{__version__.replace('+', '.').replace('-', '.')}"


def __getattr__(name: str):
    """`version` and `__version__` (api_version()), made when first asked for (reading the
    installed metadata costs a fifth of importing mlrt.lowlevel)."""
    if name in ("version", "__version__"):
        return api_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_verbosity = 0  # set_default_logger_verbosity's value (mlrt's log has no verbose levels)
_seed = None  # set_seed's value (see set_seed)


def _int(value, what: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgument(f"{what} must be an int, got {value!r}") from None


def set_default_logger_severity(level: int) -> None:
    """onnxruntime's severity (0 verbose, 1 info, 2 warning, 3 error, 4 fatal) sets the
    level of the "mlrt" logger (DEBUG, INFO, WARNING, ERROR, CRITICAL): what is logged
    outside sessions, and in sessions and runs whose log_severity_level is -1."""
    level = _int(level, "the logger severity")
    if level not in SEVERITY_LEVELS:
        raise InvalidArgument(f"logger severity {level} is out of range: 0 verbose, 1 info, 2 warning, 3 error, "
                              "4 fatal")
    log.setLevel(SEVERITY_LEVELS[level])


def set_default_logger_verbosity(level: int) -> None:
    """Kept, as onnxruntime keeps it for its verbose log; mlrt's log has no verbosity
    levels, so it changes nothing."""
    global _verbosity
    level = _int(level, "the logger verbosity")
    if level < 0:
        raise InvalidArgument(f"logger verbosity must be >= 0, got {level}")
    _verbosity = level


def set_seed(seed: int) -> None:
    """Kept, but it seeds nothing: onnxruntime seeds its random operators that have no
    `seed` attribute with it, while mlrt's (RandomUniform, RandomNormal, their -Like
    forms, Bernoulli, Multinomial; native/kernels/random.c) take a seed only from that
    attribute and otherwise draw afresh on every run.  Give the nodes a `seed` for
    reproducible values."""
    global _seed
    _seed = _int(seed, "the seed")
    log.info("set_seed(%d): mlrt's random operators are seeded only by their seed attribute", _seed)


# the providers onnxruntime 1.32 names in get_all_providers(): apps test membership in it
ONNXRUNTIME_PROVIDERS = (
    "TensorrtExecutionProvider", "CUDAExecutionProvider", "MIGraphXExecutionProvider", "OpenVINOExecutionProvider",
    "DnnlExecutionProvider", "VitisAIExecutionProvider", "QNNExecutionProvider", "NnapiExecutionProvider",
    "VSINPUExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider", "DmlExecutionProvider",
    "RknpuExecutionProvider", "WebNNExecutionProvider", "WebGpuExecutionProvider", "XnnpackExecutionProvider",
    "CANNExecutionProvider", "AzureExecutionProvider")


def get_all_providers() -> list[str]:
    """Every execution provider name a session accepts, whether or not it can run on this
    machine, CPUExecutionProvider last: onnxruntime's names (a session asked for one
    mlrt lacks warns and runs on the others, as onnxruntime does), then the provider
    modules of this mlrt, those registered, and any the runtime's manifest lists."""
    names = [n for n in providers.available() if n != "CPUExecutionProvider"]
    try:
        listed = distribution.current_runtime().providers
    except MlrtError:  # no runtime loads: the Python side still knows its providers
        listed = ()
    ours = names + [n for n in listed if n not in names and n != "CPUExecutionProvider"]
    return list(ONNXRUNTIME_PROVIDERS) + [n for n in ours if n not in ONNXRUNTIME_PROVIDERS] + ["CPUExecutionProvider"]


def get_build_info() -> str:
    """One line naming the mlrt version, the native runtime in use (kind, version, ABI,
    path) and how it was built (compiler and flags)."""
    from .. import __version__
    try:
        rt = distribution.current_runtime()
    except MlrtError as exc:
        return f"mlrt Build Info: version={__version__}, runtime=unavailable ({exc})"
    try:
        build = rt.ffi.string(rt.lib.mlrt_build_info()).decode()
    except AttributeError:  # a runtime older than the call: its manifest's record
        build = (rt.manifest or {}).get("build", "unknown")
    return (f"mlrt Build Info: version={__version__}, runtime={rt.kind}, runtime-version={rt.version}, "
            f"abi={rt.abi}, path={rt.path}, build={build}")


def has_collective_ops() -> bool:
    """False: mlrt has no collective (multi-device communication) operators."""
    return False


def disable_telemetry_events() -> None:
    """Nothing to do: mlrt sends no telemetry."""


def enable_telemetry_events() -> None:
    """Nothing to do: mlrt sends no telemetry, and this does not make it send any."""


def preload_dlls(cuda: bool = True, cudnn: bool = True, msvc: bool = True, directory=None) -> None:
    """Nothing to load: mlrt needs no CUDA, cuDNN or MSVC libraries (its runtime loads
    its own library, and OpenCL's loader, when a session needs them)."""


def print_debug_info() -> None:
    """Print what helps to debug an install: mlrt's version and build, the platform,
    and the library search path."""
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


__all__ = ["OrtValueVector", "SessionIOBinding", "api_version", "copy_tensors", "cuda_version", "disable_telemetry_events",
           "enable_telemetry_events", "get_all_providers", "get_build_info", "has_collective_ops", "package_name",
           "preload_dlls", "print_debug_info", "register_execution_provider_library", "set_default_logger_callback",
           "set_default_logger_severity", "set_default_logger_verbosity", "set_global_thread_pool_sizes", "set_seed",
           "unregister_execution_provider_library"]
