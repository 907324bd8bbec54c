"""What an InferenceSession tells about its model, its placement and its profile:
onnxruntime's get_* methods (inputs, outputs, providers, metadata, node assignment,
memory infos, provider devices), profiling, the tuning calls mlrt accepts and ignores,
and NodeArg / ModelMetadata.  InferenceSession (_session.py) takes the methods from
SessionInfo."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._errors import InvalidArgument, MlrtError

if TYPE_CHECKING:  # (onnxruntime's device classes, imported by the queries that give them)
    from ..native.graph import ValueType
    from ._device import OrtEpAssignedSubgraph, OrtMemoryInfo
    from ._options import SessionOptions

_RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"

def _type_string(vt: ValueType) -> str:
    if vt.kind != "tensor":
        return vt.type_string or vt.kind
    if vt.elem_type == 0:
        return "tensor(undefined)"
    from onnx import helper  # (onnx is imported with the first model, not with mlrt.lowlevel)
    name = helper.tensor_dtype_to_string(vt.elem_type).replace("TensorProto.", "").lower()
    return f"tensor({ {'float': 'float', 'double': 'double'}.get(name, name) })"

@dataclass(frozen=True)
class NodeArg:
    """Name, type string ("tensor(float)") and shape (ints and dim names) of an input or
    output; as in onnxruntime, [] where the shape is not known (a tensor of unknown rank,
    a sequence or map) as well as for a scalar.  mlrt only: `rank`, the number of
    dimensions, None where the shape is not known (so [] with rank 0 is a scalar)."""

    name: str
    type: str
    shape: list
    rank: int | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.rank is None and self.shape:
            object.__setattr__(self, "rank", len(self.shape))

    @staticmethod
    def of(vt: ValueType) -> "NodeArg":
        known = vt.shape is not None
        return NodeArg(vt.name, _type_string(vt), list(vt.shape) if known else [], len(vt.shape) if known else None)

@dataclass(frozen=True)
class ModelMetadata:
    producer_name: str
    graph_name: str
    domain: str
    description: str
    graph_description: str
    version: int
    custom_metadata_map: dict


class SessionInfo:
    """InferenceSession's queries: mixed into InferenceSession."""

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_overridable_initializers(self) -> list[NodeArg]:
        return list(self._overridable)

    def get_providers(self) -> list[str]:
        return [p.name for p in self._providers]

    def get_provider_options(self) -> dict:
        return {k: dict(v) for k, v in self._provider_options.items()}

    def get_session_options(self) -> SessionOptions:
        return self._options

    def get_node_assignment(self) -> list[tuple[str, str, str]]:
        """(node name, op type, provider) for every node of the optimized graph, then the
        memcpy nodes the partitioner added where values cross between providers."""
        return list(self._runnable.assignment)

    def get_modelmeta(self) -> ModelMetadata:
        m = self._graph.model
        version = m.model_version if m.HasField("model_version") else 2**63 - 1  # onnxruntime's "no version"
        return ModelMetadata(m.producer_name, m.graph.name, m.domain, m.doc_string, m.graph.doc_string,
                             version, {p.key: p.value for p in m.metadata_props})

    def end_profiling(self) -> str:
        """Stop profiling and write the trace (Chrome trace format, onnxruntime's event
        fields) to `<profile_file_prefix>_<date>_<time>.json`; returns that path, or ""
        when the session was not profiling."""
        if self._profiler is None:
            return ""
        path = self._profiler.write(self._options.profile_file_prefix)
        self._profiler = None
        return path

    def get_profiling_start_time_ns(self) -> int:
        """When profiling started, in nanoseconds since the epoch (time.time_ns()), as
        onnxruntime gives it; 0 when the session was made without profiling."""
        return self._profiling_start_ns

    def get_intra_op_thread_pool(self):
        """mlrt only: the session's intra-op thread pool (its CPU provider's, sized by
        SessionOptions.intra_op_num_threads), for work done beside the model's: mlrt.media
        tensorizes frames on it, so two pools never compete for the same cores."""
        return self._providers[-1].pool

    def get_input_memory_infos(self) -> list[OrtMemoryInfo]:
        """Where the session takes each input: host memory ("Cpu", as onnxruntime reports
        for its CPU provider).  mlrt also takes a value already in a device provider's
        memory (an OpenCL OrtValue) without copying it."""
        from ._device import OrtMemoryInfo
        return [OrtMemoryInfo._cpu() for _ in self._inputs]

    def get_output_memory_infos(self) -> list[OrtMemoryInfo]:
        """Where run() gives each output: host memory ("Cpu"); run_with_iobinding and
        run_with_ort_values can keep outputs on the device they are made on."""
        from ._device import OrtMemoryInfo
        return [OrtMemoryInfo._cpu() for _ in self._outputs]

    def get_input_epdevices(self) -> list:
        """The execution provider device of each input: the CPU provider on the host CPU
        (get_ep_devices()'s first), as onnxruntime gives for a session on the CPU."""
        from ._device import cpu_ep_device
        return [cpu_ep_device() for _ in self._inputs]

    def get_provider_graph_assignment_info(self) -> list[OrtEpAssignedSubgraph]:
        """The subgraphs each provider runs, in run order, when the session was made with the
        config entry "session.record_ep_graph_assignment_info" = "1" (otherwise MlrtError,
        as onnxruntime's Fail).  As onnxruntime reports them: each node the CPU provider
        runs is a subgraph of its own (a kernel per node), a device provider's run of
        nodes is one subgraph, and each memcpy node the partitioner added is one.
        get_node_assignment() gives the same nodes without the entry."""
        from ._device import OrtEpAssignedNode, OrtEpAssignedSubgraph
        if self._options._config.get(_RECORD_ASSIGNMENT) != "1":
            raise MlrtError(f"Session configuration entry '{_RECORD_ASSIGNMENT}' must be set to \"1\" to retrieve "
                            "EP graph assignment information.")
        nodes, assignment = self._graph.nodes, self._runnable.assignment

        def node(i):  # (a node without a name is reported without one, as onnxruntime does)
            return OrtEpAssignedNode(nodes[i].name or "", nodes[i].op_type, getattr(nodes[i], "domain", "") or "")

        subgraphs = []
        for piece in self._runnable.pieces:
            provider = assignment[piece.nodes[0]][2]
            groups = [[i] for i in piece.nodes] if provider == "CPUExecutionProvider" else [piece.nodes]
            subgraphs += [OrtEpAssignedSubgraph(provider, [node(i) for i in group]) for group in groups]
        subgraphs += [OrtEpAssignedSubgraph(provider, [OrtEpAssignedNode(name, op_type, "")])
                      for name, op_type, provider in assignment[len(nodes):]]  # the memcpy nodes
        return subgraphs

    def get_tuning_results(self) -> list:
        """[]: mlrt's kernels have no tuning results (onnxruntime gives [] on the CPU too)."""
        return []

    def set_tuning_results(self, results, *, error_on_invalid: bool = False) -> None:
        """Accepted and ignored, as onnxruntime's CPU provider does: mlrt tunes nothing."""
        if not isinstance(results, (list, tuple)):
            raise InvalidArgument(f"set_tuning_results: expected a list of results, got {type(results).__name__}")

    def set_ep_dynamic_options(self, options: dict) -> None:
        """Accepted and ignored (str -> str options), as onnxruntime's CPU provider does:
        mlrt's providers have no options that change while a session runs."""
        if not isinstance(options, dict):
            raise InvalidArgument(f"set_ep_dynamic_options: expected a dict, got {type(options).__name__}")

    def release_captured_graph(self, graph_annotation_id: int = 0) -> None:
        """Nothing to release: mlrt captures no device graphs (CUDA graphs in onnxruntime)."""


__all__ = ["ModelMetadata", "NodeArg", "SessionInfo"]
