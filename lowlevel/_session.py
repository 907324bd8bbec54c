"""InferenceSession: a model loaded, optimized and placed on providers, onnxruntime-style.
Its queries are SessionInfo's (_session_info.py), its runs SessionRuns' (_session_run.py)."""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from .. import distribution
from .._errors import DeviceError, InvalidArgument, NotImplemented
from ..native import load as native_load
from ..native import ops, optimizer, partitioner, profile
from ..native import providers as native_providers
from ..native.plan import memory
from . import _logging
from ._custom_ops import operator_classes
from ._options import GraphOptimizationLevel, RunOptions, SessionOptions
from ._providers import check_and_normalize_provider_args
from ._session_info import ModelMetadata, NodeArg, SessionInfo
from ._session_run import SessionRuns, _quick_check

log = _logging.logger()

def get_available_providers() -> list[str]:
    return list(native_providers.available())

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

class InferenceSession(SessionInfo, SessionRuns):
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
        self._max_nodes = native_load.parse_max_nodes(self._options._config)
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
        known = native_providers.available()
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
        self._graph = native_load.load(self._source, self._dimension_overrides(), prepare=ops.prepare,
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
            context = optimizer.Context(pool=cpu.pool, providers=tuple(p.name for p in self._providers))
            optimizer.optimize(self._graph, level, context, disabled=self._disabled)
        if self._options.optimized_model_filepath:
            from ..native.save import save_optimized
            save_optimized(self._graph, self._options.optimized_model_filepath, self._options._config, self._source)
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
            log.info("%ssession ready: %d node(s) on %s%s", _logging.tag(self._options.logid), len(self._graph.nodes),
                     ", ".join(self.get_providers()),
                     f"; custom operators {', '.join(f'{d}::{t}' for d, t in self._custom_ops)}"
                     if self._custom_ops else "")
        if log.isEnabledFor(logging.DEBUG):
            for name, op_type, provider in self._runnable.assignment:
                log.debug("%snode '%s' (%s) runs on %s", _logging.tag(self._options.logid), name, op_type, provider)

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

__all__ = ["InferenceSession", "NodeArg", "ModelMetadata", "get_available_providers",
           "GraphOptimizationLevel", "SessionOptions", "RunOptions"]
