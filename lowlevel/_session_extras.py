"""The rest of onnxruntime's InferenceSession and SessionOptions methods: asynchronous
runs, memory and device queries, tuning results, load cancellation, and the plugin
execution-provider methods mlrt does not have (refused with NotImplemented, saying why).
InferenceSession and SessionOptions take them from the classes here (_session.py,
_options.py)."""

from __future__ import annotations

import operator
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
        missing = [a for a in self._inputs if a.name not in input_feed]
        if unknown or missing:
            from ._feeds import names_error
            raise names_error(self._inputs, input_feed, missing, unknown)
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


_PLUGIN_EPS = ("mlrt's execution providers are built in (CPU, OpenCL) and chosen with the providers "
               "argument of InferenceSession; it has no plugin execution providers or OrtEpDevice selection")


class SessionOptionsMethods:
    """SessionOptions' load cancellation, external data files in memory and plugin-provider methods:
    mixed into SessionOptions."""

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
        """Give the contents of external data files in memory: a model's tensors whose
        external data `location` is `names[i]` ("./" in front or not) are read from the
        first `lengths[i]` bytes of `buffers[i]` (at their offset and length there)
        instead of from a file, which lets a model given as bytes, or whose data files lie
        elsewhere, be loaded.  Once any are given, every file the model names must be one
        of them (as onnxruntime asks).  A buffer is any object with the buffer protocol
        (bytes, bytearray, memoryview, a numpy array: its bytes in C order), held and
        read when a session is made.  InvalidArgument, adding none, for sequences of
        different lengths, a name given before, a buffer of fewer than `lengths[i]`
        bytes, or the wrong types."""
        from ..native.graph import memory_key
        where = "add_external_initializers_from_files_in_memory"
        if any(isinstance(seq, (str, bytes)) for seq in (names, buffers, lengths)):
            raise InvalidArgument(f"{where}: names, buffers and lengths must be sequences (lists), one item per file")
        try:
            names, buffers, lengths = list(names), list(buffers), list(lengths)
        except TypeError as exc:
            raise InvalidArgument(f"{where}: names, buffers and lengths must be sequences: {exc}") from None
        if not len(names) == len(buffers) == len(lengths):
            raise InvalidArgument(f"{where}: {len(names)} name(s), {len(buffers)} buffer(s) and {len(lengths)} "
                                  "length(s): give one of each per file")
        added: dict = {}
        for name, buffer, length in zip(names, buffers, lengths):
            if isinstance(name, bytes):
                name = name.decode("utf-8", "surrogateescape")
            if not isinstance(name, str):
                raise InvalidArgument(f"{where}: a file name must be a str, got {type(name).__name__}")
            key = memory_key(name)
            if key in self._external_files or key in added:
                raise InvalidArgument(f"{where}: a file named '{key}' has been given already")
            try:
                size = operator.index(length)
            except TypeError:
                raise InvalidArgument(f"{where}: the length of '{name}' must be an int, got "
                                      f"{type(length).__name__}") from None
            try:
                with memoryview(buffer) as view:
                    nbytes = view.nbytes
            except TypeError:
                raise InvalidArgument(f"{where}: the buffer of '{name}' must be bytes-like (bytes, bytearray, "
                                      f"memoryview, a numpy array), got {type(buffer).__name__}") from None
            if not 0 <= size <= nbytes:
                raise InvalidArgument(f"{where}: the length of '{name}' is {size}, but its buffer holds {nbytes} "
                                      "bytes (the length must be 0 to that)")
            added[key] = (buffer, size)
        self._external_files.update(added)
