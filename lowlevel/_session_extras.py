"""The rest of onnxruntime's InferenceSession and SessionOptions methods: asynchronous
runs, memory and device queries, tuning results, load cancellation, and the plugin
execution-provider methods mlrt does not have (refused with NotImplemented, saying why).
InferenceSession and SessionOptions take them from the classes here (_session.py,
_options.py)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .._errors import InvalidArgument, MlrtError, NotImplemented

if TYPE_CHECKING:  # (onnxruntime's device classes, imported by the queries that give them)
    from ._device import OrtEpAssignedSubgraph, OrtMemoryInfo

_RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"


class SessionMethods:
    """InferenceSession's methods beyond run(): mixed into InferenceSession."""

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None) -> None:
        """Run on another thread and call `callback(results, user_data, err)` from it:
        results the list of output arrays and err "" on success; [] and the error's
        message on failure (as onnxruntime's).  Returns at once.  Input names and a
        missing input are checked here (InvalidArgument); everything else is reported
        to the callback."""
        if not callable(callback):
            raise InvalidArgument(f"run_async: callback must be callable, got {type(callback).__name__}")
        if not isinstance(input_feed, dict):
            raise InvalidArgument(f"input_feed must be a dict of name -> array, got {type(input_feed).__name__}")
        known = {a.name for a in self._inputs} | {a.name for a in self._overridable}
        unknown = [n for n in input_feed if n not in known]
        missing = [a.name for a in self._inputs if a.name not in input_feed]
        if unknown or missing:
            raise InvalidArgument(f"run_async: input(s) {', '.join(unknown)} are not inputs of this model" if unknown
                                  else f"run_async: required input(s) {', '.join(missing)} are missing from the feed")
        names = list(output_names) if output_names else [o.name for o in self._outputs]

        def work():
            try:
                results = self._run(names, input_feed, run_options)
            except Exception as exc:  # noqa: BLE001 - handed to the callback, as onnxruntime does
                callback([], user_data, str(exc) or type(exc).__name__)
                return
            callback(results, user_data, "")

        threading.Thread(target=work, name="mlrt-run-async", daemon=True).start()

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
        """The nodes each provider runs, one OrtEpAssignedSubgraph per provider in order of
        first use, when the session was made with the config entry
        "session.record_ep_graph_assignment_info" = "1" (otherwise MlrtError, as
        onnxruntime's Fail).  get_node_assignment() gives the same without the entry."""
        from ._device import OrtEpAssignedNode, OrtEpAssignedSubgraph
        if self._options._config.get(_RECORD_ASSIGNMENT) != "1":
            raise MlrtError(f"Session configuration entry '{_RECORD_ASSIGNMENT}' must be set to \"1\" to retrieve "
                            "EP graph assignment information.")
        nodes = self._graph.nodes
        groups: dict[str, list[OrtEpAssignedNode]] = {}
        for i, (name, op_type, provider) in enumerate(self._runnable.assignment):
            domain = getattr(nodes[i], "domain", "") if i < len(nodes) else ""
            groups.setdefault(provider, []).append(OrtEpAssignedNode(name, op_type, domain or ""))
        return [OrtEpAssignedSubgraph(ep, group) for ep, group in groups.items()]

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


_PLUGIN_EPS = ("mlrt's execution providers are built in (CPU, OpenCL) and chosen with the providers "
               "argument of InferenceSession; it has no plugin execution providers or OrtEpDevice selection")


class SessionOptionsMethods:
    """SessionOptions' load cancellation and plugin-provider methods: mixed into SessionOptions."""

    def set_load_cancellation_flag(self, value: bool) -> None:
        """True: a session being made with these options (now, or later) stops at its next
        step and raises MlrtError (onnxruntime's ModelLoadCanceled is that class); False
        lets sessions be made again."""
        object.__setattr__(self, "_load_canceled", bool(value))

    def _check_load_canceled(self) -> None:
        if getattr(self, "_load_canceled", False):
            raise MlrtError("Session creation canceled due to user request (SessionOptions.set_load_cancellation_flag)")

    def has_providers(self) -> bool:
        """False: providers are never set on mlrt's SessionOptions (add_provider and the
        selection policies are not supported); InferenceSession's providers argument
        names them."""
        return False

    def add_provider(self, provider_name: str, provider_options: dict) -> None:
        raise NotImplemented(f"SessionOptions.add_provider('{provider_name}'): pass providers=[...] to "
                             f"InferenceSession instead ({_PLUGIN_EPS})")

    def add_provider_for_devices(self, ep_devices, provider_options: dict) -> None:
        raise NotImplemented(f"SessionOptions.add_provider_for_devices: {_PLUGIN_EPS}")

    def set_provider_selection_policy(self, policy) -> None:
        raise NotImplemented(f"SessionOptions.set_provider_selection_policy: {_PLUGIN_EPS}")

    def set_provider_selection_policy_delegate(self, delegate) -> None:
        raise NotImplemented(f"SessionOptions.set_provider_selection_policy_delegate: {_PLUGIN_EPS}")

    def set_ep_context_data_read_func(self, read_func, max_data_size: int) -> None:
        raise NotImplemented("SessionOptions.set_ep_context_data_read_func: mlrt does not load EPContext "
                             "(precompiled) models")

    def clear_ep_context_data_read_func(self) -> None:
        """Nothing to clear: mlrt takes no EPContext read function."""

    def add_external_initializers_from_files_in_memory(self, names, buffers, lengths) -> None:
        raise NotImplemented("SessionOptions.add_external_initializers_from_files_in_memory: mlrt reads a model's "
                             "external data from files next to it; give the weights with add_initializer or "
                             "add_external_initializers (name -> array) instead")
