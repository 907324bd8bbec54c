"""SessionOptions, RunOptions and the option enums, with onnxruntime's names."""

from __future__ import annotations

import enum

from .._errors import InvalidArgument


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """Options fixed when a session is created."""

    def __init__(self):
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_profiling = False
        self.profile_file_prefix = "mlrt_profile"
        self.optimized_model_filepath = ""
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self._config: dict[str, str] = {}
        self._dim_by_name: dict[str, int] = {}
        self._dim_by_denotation: dict[str, int] = {}

    def __setattr__(self, key, value):
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
            raise InvalidArgument(f"session config entry '{key}' is not set")
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name: str, dim_value: int) -> None:
        """Every input dimension named `dim_name` (its dim_param) becomes `dim_value`."""
        self._dim_by_name[str(dim_name)] = _dim_value(dim_value, dim_name)

    def add_free_dimension_override_by_denotation(self, dim_denotation: str, dim_value: int) -> None:
        """Every free input dimension with this denotation (e.g. "DATA_BATCH") becomes `dim_value`."""
        self._dim_by_denotation[str(dim_denotation)] = _dim_value(dim_value, dim_denotation)

    def register_custom_ops_library(self, path: str) -> None:
        raise InvalidArgument("custom operator libraries are not supported yet; "
                              "define the operator as a file in mlrt/native/ops instead")


def _dim_value(value, name) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"free dimension override '{name}': the size must be an int >= 1, got {value!r}")
    return value


class RunOptions:
    """Options for one run() call."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
