"""SessionOptions, RunOptions and the option enums, with onnxruntime's names."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InvalidArgument, NotAvailable
from ._enum import OrtEnum
from . import _logging
from ._ortvalue import OrtValue
from ._options_loading import LoadingOptions
from ._options_plugins import PluginProviderOptions

if TYPE_CHECKING:  # (custom operators bring in the native library's glue: imported when registered)
    from ._custom_ops import CustomOp


class GraphOptimizationLevel(OrtEnum):
    """How far sessions optimize the graph.  ORT_ENABLE_LAYOUT (onnxruntime's extended
    rewrites plus layout changes) runs what ORT_ENABLE_EXTENDED runs: mlrt has no layout
    passes (its kernels pick their own memory layout)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(OrtEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(OrtEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


class SessionOptions(LoadingOptions, PluginProviderOptions):  # (_options_loading.py, _options_plugins.py)
    """Options fixed when a session is created.

    Stored only, as onnxruntime tunes its own internals with them and mlrt has no such
    knob: `execution_order` (mlrt orders nodes topologically, each provider's together),
    `use_per_session_threads` (every session has its own pool), `use_deterministic_compute`
    (mlrt's kernels give the same result run after run anyway), and the memory switches
    `enable_cpu_mem_arena`, `enable_mem_pattern`, `enable_mem_reuse`.

    `log_severity_level` (-1, the default: the default logger's; 0 verbose ... 4 fatal)
    filters what the session logs to the "mlrt" logger while it is made and runs.
    Custom operators: register_custom_op, register_custom_ops_library (docs/custom_ops.md).
    """

    def __init__(self):
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_profiling = False
        self.profile_file_prefix = "mlrt_profile"
        self.optimized_model_filepath = ""
        self.log_severity_level = -1
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.execution_order = ExecutionOrder.DEFAULT
        self.use_deterministic_compute = False
        self.use_per_session_threads = True
        self._config: dict[str, str] = {}
        self._initializers: dict[str, np.ndarray] = {}
        self._external_files: dict[str, tuple] = {}  # external data files in memory: name -> (buffer, length)
        self._dim_by_name: dict[str, int] = {}
        self._dim_by_denotation: dict[str, int] = {}
        self._custom_ops: dict[tuple[str, str], CustomOp] = {}

    def __setattr__(self, key, value):
        if key == "log_severity_level":
            value = _logging.check_severity(value, "SessionOptions.log_severity_level")
        if key == "intra_op_num_threads" and (not isinstance(value, int) or value < 0):
            raise InvalidArgument(f"intra_op_num_threads must be an int >= 0, got {value!r}")
        if key == "graph_optimization_level":
            try:
                value = GraphOptimizationLevel(value)
            except ValueError:
                raise InvalidArgument(f"graph_optimization_level {value!r} is not a GraphOptimizationLevel") from None
        object.__setattr__(self, key, value)

    def add_session_config_entry(self, key: str, value: str) -> None:
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key: str) -> str:
        if key not in self._config:
            raise NotAvailable(f"session config entry '{key}' is not set. SessionOptions does not have configuration "
                               f"with key: {key}")
        return self._config[key]

    def add_initializer(self, name: str, ortvalue) -> None:
        """Sessions made with these options use `ortvalue` (an OrtValue or a host array;
        held, not copied) as the value of the model's initializer `name`.  The session
        checks that the model has such an initializer, of the same dtype and shape."""
        if not isinstance(name, str):
            raise InvalidArgument(f"add_initializer: the name must be a str, got {type(name).__name__}")
        self._initializers[name] = _host_array(ortvalue, f"add_initializer('{name}')")

    def add_external_initializers(self, names, ortvalues) -> None:
        """add_initializer for each name and value (onnxruntime's way to hand over weights
        a model keeps outside; mlrt takes them for any initializer)."""
        names, values = list(names), list(ortvalues)
        if len(names) != len(values):
            raise InvalidArgument(f"add_external_initializers: {len(names)} name(s) but {len(values)} value(s)")
        for name, value in zip(names, values):
            self.add_initializer(name, value)

    def add_free_dimension_override_by_name(self, dim_name: str, dim_value: int) -> None:
        """Every input dimension named `dim_name` (its dim_param) becomes `dim_value`."""
        self._dim_by_name[str(dim_name)] = _dim_value(dim_value, dim_name)

    def add_free_dimension_override_by_denotation(self, dim_denotation: str, dim_value: int) -> None:
        """Every free input dimension with this denotation (e.g. "DATA_BATCH") becomes `dim_value`."""
        self._dim_by_denotation[str(dim_denotation)] = _dim_value(dim_value, dim_denotation)

    def register_custom_op(self, domain: str, op_type: str, compute, infer=None) -> CustomOp:
        """Sessions made with these options run the nodes of (`domain`, `op_type`) with
        `compute(*inputs, **attributes)` (numpy arrays in; an array, or a tuple of them,
        out), on the host; `infer(*input_types, **attributes)`, when given, returns the
        (dtype, shape) of each output, which the results are checked against.  The
        domain must be one of your own.  Registering a (domain, op_type) again replaces
        it.  Returns the CustomOp; docs/custom_ops.md has the details."""
        from ._custom_ops import CustomOp
        op = CustomOp(domain, op_type, compute, infer)
        self._custom_ops[op.key] = op
        return op

    def register_custom_ops_library(self, path: str) -> None:
        """Load the shared library at `path` (its code runs: only load libraries you
        trust) and register the operators its `mlrt_register_custom_ops` registers
        (native/include/mlrt.h; docs/custom_ops.md).  NoSuchFile if there is no file,
        InvalidArgument if it is not a shared library, lacks the entry point, or its
        entry point fails."""
        from ._custom_ops import load_library
        for op in load_library(path):
            self._custom_ops[op.key] = op

    def get_custom_ops(self) -> list[CustomOp]:
        """The custom operators registered, in the order they were."""
        return list(self._custom_ops.values())


def _host_array(value, where: str) -> np.ndarray:
    if isinstance(value, OrtValue):
        value = value.numpy()  # (one on a device is read back)
    if not isinstance(value, np.ndarray):
        raise InvalidArgument(f"{where}: expected an OrtValue or a numpy array, got {type(value).__name__}")
    return value


def _dim_value(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"free dimension override '{name}': the size must be an int >= 1, got {value!r}")
    return value


_TERMINATE_LOCK = threading.Lock()  # (one for all RunOptions: taken briefly, twice a run)


class RunOptions:
    """Options for one run() call.

    `terminate` may be set from another thread while run() is running with these
    options: the run stops at the next node boundary (between the nodes of a native
    plan, the iterations of a loop, the pieces of a partitioned graph) with an
    MlrtError, and the session stays usable.  Set it back to False to run again.

    `log_severity_level` (-1, the default: the session's; 0 verbose ... 4 fatal) filters
    what is logged to the "mlrt" logger during the run."""

    def __init__(self):
        self.log_severity_level = -1
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self._terminate = False
        self._flags: set = set()  # the terminate flags (int32_t * cdata) of runs in progress
        self.only_execute_path_to_fetches = False
        self._config: dict[str, str] = {}
        self._adapters: list = []  # the LoraAdapters made active for runs with these options, in order

    def __setattr__(self, key, value):
        if key == "log_severity_level":
            value = _logging.check_severity(value, "RunOptions.log_severity_level")
        object.__setattr__(self, key, value)

    @property
    def terminate(self) -> bool:
        return self._terminate

    @terminate.setter
    def terminate(self, value) -> None:
        with _TERMINATE_LOCK:
            self._terminate = bool(value)
            for flag in self._flags:
                flag[0] = 1 if self._terminate else 0

    def _watch(self, flag) -> None:
        """A run starts with these options: `flag` follows `terminate` until _unwatch."""
        with _TERMINATE_LOCK:
            flag[0] = 1 if self._terminate else 0
            self._flags.add(flag)

    def _unwatch(self, flag) -> None:
        with _TERMINATE_LOCK:
            self._flags.discard(flag)

    def add_run_config_entry(self, key: str, value: str) -> None:
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key: str) -> str:
        if key not in self._config:
            raise NotAvailable(f"run config entry '{key}' is not set. RunOptions does not have configuration with key: "
                               f"{key}")
        return self._config[key]

    def add_active_adapter(self, adapter) -> None:
        """Runs with these options feed the parameters of `adapter` (a LoraAdapter) as the
        model inputs of those names, over what the feed gives; where adapters added
        earlier give a name too, theirs is used (lowlevel/_lora.py has the rules)."""
        from ._lora import LoraAdapter
        if not isinstance(adapter, LoraAdapter):
            raise InvalidArgument(f"add_active_adapter: expected a LoraAdapter, got {type(adapter).__name__}")
        self._adapters.append(adapter)
