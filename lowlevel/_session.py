"""InferenceSession: load, optimize, place and run a model, onnxruntime-style."""

from __future__ import annotations

import logging
import operator
import os
import time
from dataclasses import dataclass

import numpy as np

from .. import distribution
from .._errors import DeviceError, InvalidArgument, MlrtError, NotImplemented
from ..native import graph as graph_mod
from ..native import ops, optimizer, partitioner, profile, terminate
from ..native.plan import memory
from ..native.providers import _base as providers_base
from . import _logging
from . import _feeds
from ._custom_ops import operator_classes
from ._options import GraphOptimizationLevel, RunOptions, SessionOptions
from ._ortvalue import IOBinding, OrtValue
from ._providers import check_and_normalize_provider_args
from ._session_extras import SessionMethods
from ._sparse import SparseTensor

log = _logging.logger()


def _type_string(vt: graph_mod.ValueType) -> str:
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
    a sequence or map) as well as for a scalar."""

    name: str
    type: str
    shape: list

    @staticmethod
    def of(vt: graph_mod.ValueType) -> "NodeArg":
        return NodeArg(vt.name, _type_string(vt), list(vt.shape) if vt.shape is not None else [])


@dataclass(frozen=True)
class ModelMetadata:
    producer_name: str
    graph_name: str
    domain: str
    description: str
    graph_description: str
    version: int
    custom_metadata_map: dict


def get_available_providers() -> list[str]:
    return list(providers_base.available())


def _check_runtime_opsets(graph) -> None:
    """A model newer than the runtime in use is refused up front, naming the runtime
    and the way out (the other distribution, or a newer install)."""
    rt = distribution.current_runtime()
    for domain, version in sorted(graph.opsets.items()):
        span = (rt.opsets or {}).get(domain or "ai.onnx")
        if span is None or version <= span.get("max", version):
            continue  # domains the runtime does not list run on Python operators, if at all
        other = ("the bundled runtime (MLRT_RUNTIME=bundled) or a newer system install (mlrt runtime install)"
                 if rt.kind != "bundled" else "a newer mlrt, or a newer system runtime with MLRT_RUNTIME=auto")
        raise NotImplemented(f"the model needs {domain or 'ai.onnx'} opset {version}, but the {rt.kind} runtime "
                             f"{rt.version} at {rt.path} supports opsets {span.get('min', 1)}-{span['max']}; "
                             f"use {other}")


def _disabled_passes(names) -> frozenset:
    """The optimizer passes named by `disabled_optimizers` (as onnxruntime takes it):
    mlrt's pass names are the modules of native/optimizer (e.g. "fuse_conv_activation")."""
    if not names:
        return frozenset()
    if isinstance(names, str):  # one name, not its letters
        names = [names]
    known = {p.__name__.rsplit(".", 1)[-1] for p in optimizer.passes()}
    unknown = sorted(set(names) - known)
    if unknown:
        raise InvalidArgument(f"disabled_optimizers: unknown pass(es) {', '.join(unknown)}; "
                              f"mlrt's passes are {', '.join(sorted(known))}")
    return frozenset(names)


class InferenceSession(SessionMethods):  # (run_async, memory infos, ...: _session_extras.py)
    """Run an ONNX model: InferenceSession(path_or_bytes, sess_options=None, providers=None,
    provider_options=None, disabled_optimizers=None)."""

    def __init__(self, path_or_bytes, sess_options: SessionOptions | None = None, providers=None,
                 provider_options=None, **kwargs):
        self._options = sess_options or SessionOptions()
        self._source = path_or_bytes  # (set_providers makes the session again from it)
        self._model_path = path_or_bytes if isinstance(path_or_bytes, (str, os.PathLike)) else None
        self._disabled = _disabled_passes(kwargs.get("disabled_optimizers"))
        self._fallback = str(kwargs.get("enable_fallback", 1)) != "0"
        self._profiler = profile.Profiler() if self._options.enable_profiling else None
        started = self._profiler.start_ns if self._profiler is not None else 0
        # onnxruntime's start time is on the wall clock (ns since the epoch), the trace's on the monotonic one
        self._profiling_start_ns = time.time_ns() - (time.monotonic_ns() - started) if started else 0
        # the custom operators and log severity, fixed now (later changes to the options do not count)
        self._custom_ops = operator_classes(self._options._custom_ops)
        self._log_severity = self._options.log_severity_level
        # the limits (docs/reliability.md): bytes for any one allocation, nodes in the model
        self._memory_limit = memory.parse_limit(self._options._config)
        self._max_nodes = graph_mod.parse_max_nodes(self._options._config)
        # nothing of the session's own to put in force around a run (see _run)
        self._plain = self._log_severity == -1 and not self._custom_ops and self._memory_limit is None
        self._create(providers, provider_options, started)

    def _enter(self, run_options: RunOptions | None = None) -> tuple:
        """The session's custom operators and log severity (the run's, if it sets one)
        rule this thread until _leave."""
        level = _logging.threshold(run_options.log_severity_level if run_options is not None else -1,
                                   self._log_severity)
        if level is None and not self._custom_ops and _logging.idle() and ops.custom_idle():
            return None  # nothing to set, nothing to undo (a run of a tiny model: ~0.8 us saved)
        return _logging.enter(level), ops.custom(self._custom_ops)

    @staticmethod
    def _leave(tokens: tuple | None) -> None:
        if tokens is None:
            return
        ops.custom_done(tokens[1])
        _logging.leave(tokens[0])

    def _create(self, providers, provider_options, started: int) -> None:
        tokens = self._enter()
        try:
            with memory.limiting(self._memory_limit):
                self._make(providers, provider_options, started)
        finally:
            self._leave(tokens)

    def _make(self, providers, provider_options, started: int) -> None:
        """Providers, model, optimization and placement: the session's making, which
        set_providers repeats."""
        known = providers_base.available()
        # (a name not available here is warned of and left out, as onnxruntime does)
        names, options = check_and_normalize_provider_args(providers or ["CPUExecutionProvider"], provider_options,
                                                           list(known))
        for i in reversed(range(len(names))):
            if names[i] not in known:
                del names[i], options[i]
        if "CPUExecutionProvider" not in names:
            names.append("CPUExecutionProvider")
            options.append({})
        threads = self._options.intra_op_num_threads
        self._providers = [known[n](o, intra_op_num_threads=threads) for n, o in zip(names, options)]
        self._provider_options = {n: o for n, o in zip(names, options)}

        self._options._check_load_canceled()  # (SessionOptions.set_load_cancellation_flag)
        loading = time.monotonic_ns()
        self._graph = graph_mod.load(self._source, self._dimension_overrides(), prepare=ops.prepare,
                                     max_nodes=self._max_nodes, files=self._options._external_files)
        if self._profiler is not None:
            self._profiler.event("Session", "model_loading_uri" if self._model_path else "model_loading_array",
                                 loading, time.monotonic_ns())
        _check_runtime_opsets(self._graph)
        self._options._check_load_canceled()
        _use_initializers(self._graph, self._options._initializers)
        self._inputs = [NodeArg.of(v) for v in self._graph.inputs]
        self._overridable = [NodeArg.of(v) for v in self._graph.overridable]
        self._outputs = [NodeArg.of(v) for v in self._graph.outputs]
        self._output_names = [o.name for o in self._outputs]
        self._output_index = {n: k for k, n in enumerate(self._output_names)}  # name -> position
        self._input_types = {v.name: v for v in self._graph.inputs + self._graph.overridable}
        graph_inputs = {id(v) for v in self._graph.inputs}
        self._quick_checks = {v.name: _quick_check(v, id(v) in graph_inputs)
                              for v in self._graph.inputs + self._graph.overridable
                              if v.kind == "tensor" and v.elem_type and v.shape is not None}

        cpu = self._providers[-1]
        level = int(self._options.graph_optimization_level)
        if level > 0:
            optimizer.optimize(self._graph, level, optimizer.Context(pool=cpu.pool), disabled=self._disabled)
        if self._options.optimized_model_filepath:
            self._save_optimized(self._options.optimized_model_filepath)
        self._assignment, self._runnable = self._place()
        self._quick_runs: tuple = ()  # QuickRuns of the signatures fed last (see run)
        self._quick_failures = 0
        self._no_cpu_fallback = self._runnable.no_fallback  # session.disable_cpu_ep_fallback
        self._apply_fallback()
        fell = [p for p in self._runnable.pieces if p.fell_back]
        if fell and not self._fallback:
            asked = ", ".join(p.name for p in self._providers if not p.on_host)
            raise DeviceError(f"{len(fell)} partition(s) could not be compiled for {asked} (see the warning), "
                              "and fallback is disabled (disable_fallback(), or enable_fallback=0)")
        if self._profiler is not None:
            self._profiler.event("Session", "session_initialization", started, time.monotonic_ns())
        if log.isEnabledFor(logging.INFO):
            log.info("%ssession ready: %d node(s) on %s%s", _tag(self._options.logid), len(self._graph.nodes),
                     ", ".join(self.get_providers()),
                     f"; custom operators {', '.join(f'{d}::{t}' for d, t in self._custom_ops)}"
                     if self._custom_ops else "")
        if log.isEnabledFor(logging.DEBUG):
            for name, op_type, provider in self._runnable.assignment:
                log.debug("%snode '%s' (%s) runs on %s", _tag(self._options.logid), name, op_type, provider)

    def _dimension_overrides(self) -> dict:
        o = self._options
        return {"by_name": o._dim_by_name, "by_denotation": o._dim_by_denotation}

    # -- placement -------------------------------------------------------------------------
    def set_providers(self, providers=None, provider_options=None) -> None:
        """Place the model again on `providers` (names or (name, options) tuples, in order
        of precedence; None: the CPU provider alone), as onnxruntime re-creates its session:
        the model is read, optimized and placed anew with the same SessionOptions.  If that
        fails the session is left as it was."""
        saved = dict(self.__dict__)
        try:
            self._create(providers, provider_options, time.monotonic_ns())
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def disable_fallback(self) -> None:
        """A device partition that fails (its programs do not build, the device reports an
        error while running) raises DeviceError instead of running on the CPU provider.
        (onnxruntime's fallback re-creates the session on other providers; mlrt's falls
        back one partition at a time, so this switch stops that.)"""
        self._fallback = False
        self._apply_fallback()

    def enable_fallback(self) -> None:
        """A failing device partition runs on the CPU provider, with a warning (the default;
        `session.disable_cpu_ep_fallback` in the session config still rules placement)."""
        self._fallback = True
        self._apply_fallback()

    def _apply_fallback(self) -> None:
        self._runnable.no_fallback = self._no_cpu_fallback or not self._fallback

    def _place(self):
        placement = partitioner.Placement(self._graph, self._providers, self._options._config)
        return placement.assignment, placement

    def _save_optimized(self, path):
        import onnx
        from onnx import numpy_helper
        from ..native.optimizer import _portable
        graph = self._graph

        def dtype_of(name):
            if name in graph.initializers:
                return graph.initializers[name].dtype
            t = graph.type_of(name)
            return onnx.helper.tensor_dtype_to_np_dtype(t.elem_type) if t is not None and t.elem_type else None

        nodes, constants = _portable.portable(graph.nodes, graph.opset(""), dtype_of)
        m = onnx.ModelProto()
        m.CopyFrom(graph.model)
        del m.graph.node[:]
        m.graph.node.extend(nodes)
        del m.graph.initializer[:]
        m.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in {**graph.initializers, **constants}.items())
        _portable.declare_inputs(m, [v.name for v in graph.inputs], [v.name for v in graph.overridable])
        declared = {o.domain for o in m.opset_import}
        for domain in sorted({n.domain for n in nodes} - declared - {"ai.onnx"}):
            m.opset_import.append(onnx.helper.make_opsetid(domain, 1))  # e.g. com.microsoft for fused nodes
        external, min_size = _portable.external_options(self._options._config)
        _portable.save(m, path, external, min_size, source_files=lambda: graph_mod.source_files(self._source))

    # -- introspection ------------------------------------------------------------------------
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

    # -- running ----------------------------------------------------------------------------------
    def _check_feeds(self, input_feed) -> dict[str, np.ndarray]:
        if not isinstance(input_feed, dict):
            raise InvalidArgument(f"input_feed must be a dict of name -> array, got {type(input_feed).__name__}")
        feeds = {}
        quick = self._quick_checks
        required = 0  # graph inputs (not overridable initializers) taken on the quick path
        unknown = []
        for name, value in input_feed.items():
            check = quick.get(name)
            if check is not None and type(value) is np.ndarray and value.dtype == check[0]:
                shape = value.shape
                if (shape == check[1] or (len(shape) == check[3] and (check[4] is None or check[4](shape) == check[5]))) \
                        and (not check[6] or _all_str(value)):  # (strings: other elements, bytes, are made str)
                    feeds[name] = value  # the common case, kept quick: a host array of the right type
                    required += check[2]
                    continue
            vt = self._input_types.get(name)
            if vt is None:
                unknown.append(name)
            else:
                feeds[name] = self._check_value(vt, value)
        if required != len(self._inputs) or unknown:
            missing = [a for a in self._inputs if a.name not in feeds]
            if missing or unknown:
                raise _feeds.names_error(self._inputs, input_feed, missing, unknown)
        return feeds

    @staticmethod
    def _check_value(vt: graph_mod.ValueType, value) -> np.ndarray:
        from onnx import helper
        if vt.kind == "sequence":
            if not isinstance(value, (list, tuple)):
                raise InvalidArgument(f"input '{vt.name}': expected a sequence (list of arrays), got {type(value).__name__}")
            return _feeds.sequence(vt.name, vt.type_string, value)
        if vt.kind == "optional":
            if value is None:
                return None
            inner = vt.type_string[len("optional("):-1]
            if inner.startswith("seq("):
                return _feeds.sequence(vt.name, inner, value)
            elem = _feeds.element_type(inner)
            return _feeds.tensor(vt.name, elem, f"tensor({_feeds.type_name(elem)})", value)
        if vt.kind == "map":
            if not isinstance(value, dict):
                raise InvalidArgument(f"input '{vt.name}': expected a map (dict), got {type(value).__name__}")
            return dict(value)
        if vt.kind != "tensor":
            raise NotImplemented(f"input '{vt.name}': {vt.kind} inputs are not supported yet")
        if isinstance(value, OrtValue):
            value = value._value
        if isinstance(value, SparseTensor):
            value = value._dense()  # a sparse value fed to a dense input: its dense form
        if providers_base.owner_of(value) is not None:
            arr = value  # stays on its device; dtype and shape are checked like an array's
            if vt.elem_type and arr.dtype != np.dtype(helper.tensor_dtype_to_np_dtype(vt.elem_type)):
                raise InvalidArgument(f"input '{vt.name}': expected {_type_string(vt)}, got a device array of "
                                      f"{arr.dtype}. Unexpected input data type.")
        else:
            if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
                value = value.numpy()
            arr = _feeds.tensor(vt.name, vt.elem_type, _type_string(vt), value)
        if vt.shape is not None:
            _feeds.shape(vt.name, vt.shape, arr)
        return arr

    def run(self, output_names, input_feed, run_options: RunOptions | None = None) -> list:
        if (self._quick_runs and run_options is None and type(input_feed) is dict and terminate.current() is None
                and profile.active() is None and _idle() and _logging.debug_off(log)):
            # feeds of a signature run before: one QuickRun, no checks (they passed for these)
            for quick in self._quick_runs:
                results = quick.run(input_feed)
                if results is not None:
                    if not output_names:
                        return results
                    try:
                        return [results[self._output_index[n]] for n in output_names]
                    except (KeyError, TypeError):
                        break  # not an output: the full path says so
        return self._run(output_names, input_feed, run_options)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options: RunOptions | None = None) -> list:
        """run() on OrtValues (host arrays are taken too), giving OrtValues; an output made
        on a device stays there, as onnxruntime's do."""
        if not isinstance(input_dict_ort_values, dict):
            raise InvalidArgument("input_dict_ort_values must be a dict of name -> OrtValue, "
                                  f"got {type(input_dict_ort_values).__name__}")
        feeds = {k: v._value if isinstance(v, OrtValue) else v for k, v in input_dict_ort_values.items()}
        names = list(output_names) if output_names else self._output_names
        return [OrtValue(v) for v in self._run(names, feeds, run_options, set(names))]

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices=None) -> None:
        """run_with_ort_values with names and values in lists; `fetches` (a list) is filled
        with the output OrtValues, replacing what it held.  `fetch_devices` is not used:
        outputs stay where they are made."""
        if not isinstance(fetches, list):
            raise InvalidArgument(f"fetches must be a list to fill with OrtValues, got {type(fetches).__name__}")
        fetches[:] = self.run_with_ort_values(fetch_names, dict(zip(feed_names, feeds, strict=True)), run_options)

    def create_ortvalue_from_shape_and_type(self, shape, element_type, device_type: str = "cpu", device_id: int = 0,
                                            vendor_id: int = -1) -> OrtValue:
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type, device_id)

    def _run(self, output_names, input_feed, run_options=None, keep_on_device=()) -> list:
        if run_options is not None and getattr(run_options, "_adapters", None):  # LoRA adapters' parameters fed
            from ._lora import with_adapters
            input_feed = with_adapters(self, input_feed, run_options._adapters)
        feeds = self._check_feeds(input_feed)
        if output_names:
            names = list(output_names)
            known = self._output_index
            for n in names:
                if n not in known:
                    raise _feeds.output_error(n, known)
        else:
            names = self._output_names
        if self._plain and run_options is None and _idle() and _logging.debug_off(log):
            # no log level, custom operators, memory limit or run options to put in force
            # (the common case: a run of a tiny model is a few microseconds)
            results = self._run_graph(feeds, keep_on_device)
            if self._profiler is None and not keep_on_device and self._quick_failures < _QUICK_TRIES:
                self._remember_quick_run(feeds)
            return [results[n] for n in names]
        tokens = self._enter(run_options)
        limit = memory.enter(self._memory_limit)  # this session's memory limit rules the run
        try:
            if log.isEnabledFor(logging.DEBUG):
                tag = run_options.run_tag if run_options is not None else ""
                log.debug("%srun%s: %d input(s), output(s) %s", _tag(self._options.logid),
                          f" '{tag}'" if tag else "", len(feeds), ", ".join(names))
            results = self._run_with(feeds, run_options, keep_on_device)
        finally:
            memory.leave(limit)
            self._leave(tokens)
        return [results[n] for n in names]

    def _remember_quick_run(self, feeds) -> None:
        """Keep a QuickRun for these feeds' signature (most recent first, _QUICK_KEPT at
        most), where the graph runs as one native plan; after _QUICK_TRIES signatures
        that cannot, stop asking."""
        if terminate.current() is not None or profile.active() is not None:
            return
        if any(q.fits(feeds) for q in self._quick_runs):
            return  # (fed another way: a list, a strided array)
        quick = self._runnable.quick_run(feeds, self._output_names)
        if quick is None:
            self._quick_failures += 1
        else:
            self._quick_runs = (quick,) + self._quick_runs[:_QUICK_KEPT - 1]

    def _run_with(self, feeds, run_options, keep_on_device) -> dict:
        if run_options is None:
            results = self._run_graph(feeds, keep_on_device)
        else:
            if run_options.terminate:
                raise MlrtError("run() was terminated by RunOptions.terminate")
            flag = terminate.new_flag()  # this run's own: terminate set from another thread writes it
            run_options._watch(flag)
            try:
                with terminate.watching(flag):
                    results = self._run_graph(feeds, keep_on_device)
            finally:
                run_options._unwatch(flag)
        return results

    def _run_graph(self, feeds, keep_on_device) -> dict:
        profiler = self._profiler
        if profiler is None:
            return self._runnable.run(feeds, keep_on_device)
        with profile.profiling(profiler):
            start = time.monotonic_ns()
            results = self._runnable.run(feeds, keep_on_device)
            profiler.event("Session", "model_run", start, time.monotonic_ns())
        return results

    def io_binding(self) -> IOBinding:
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options: RunOptions | None = None) -> None:
        """Run on the bound inputs; outputs stay where they were bound (get_outputs())."""
        iobinding._run(lambda names, feeds, on_device: self._run(names, feeds, run_options, on_device))


_STRING = 8  # onnx.TensorProto.STRING
_QUICK_KEPT = 4  # signatures with a QuickRun per session
_QUICK_TRIES = 8  # signatures that run another way before a session stops asking


def _idle() -> bool:
    """Whether no session or run in this thread has a log level, custom operators or a
    memory limit in force (a run from inside a custom operator, say)."""
    return _logging.idle() and ops.custom_idle() and memory.idle()


def _tag(logid: str) -> str:
    return f"[{logid}] " if logid else ""


def _use_initializers(graph, given: dict) -> None:
    """SessionOptions.add_initializer: each value replaces the model's initializer of
    that name, which must exist and have the same dtype and shape."""
    for name, value in given.items():
        have = graph.initializers.get(name)
        if have is None:
            what = ("a graph input, not an initializer" if any(v.name == name for v in graph.inputs)
                    else "not an initializer of the model")
            some = ", ".join(list(graph.initializers)[:8]) + (", ..." if len(graph.initializers) > 8 else "")
            raise InvalidArgument(f"SessionOptions.add_initializer: '{name}' is {what} "
                                  f"(initializers: {some or 'none'})")
        if value.dtype != have.dtype or value.shape != have.shape:
            raise InvalidArgument(f"SessionOptions.add_initializer: '{name}' is {have.dtype}{list(have.shape)} in the "
                                  f"model, the value given is {value.dtype}{list(value.shape)}")
        graph.initializers[name] = np.ascontiguousarray(value)


def _all_str(a: np.ndarray) -> bool:
    """Whether an object array holds str elements only (which _feeds.strings leaves as they are)."""
    if a.size == 1:
        return type(a.item()) is str
    return all(type(s) is str for s in a.flat)


def _quick_check(vt: graph_mod.ValueType, required: bool) -> tuple:
    """(dtype, dims, 1 if a graph input else 0, rank, getter of the fixed dims or None,
    their sizes, whether it holds strings) a fed array is checked against on the quick
    path of _check_feeds; a dim of None takes any size (as _check_value: free, symbolic
    or non-positive)."""
    dims = tuple(d if isinstance(d, int) and d > 0 else None for d in vt.shape)
    fixed = [(i, d) for i, d in enumerate(dims) if d is not None]
    getter = operator.itemgetter(*(i for i, _ in fixed)) if fixed else None
    sizes = tuple(d for _, d in fixed) if len(fixed) > 1 else fixed[0][1] if fixed else None
    from onnx import helper
    return (np.dtype(helper.tensor_dtype_to_np_dtype(vt.elem_type)), dims, int(required), len(dims), getter, sizes,
            vt.elem_type == _STRING)


__all__ = ["InferenceSession", "NodeArg", "ModelMetadata", "get_available_providers",
           "GraphOptimizationLevel", "SessionOptions", "RunOptions"]
