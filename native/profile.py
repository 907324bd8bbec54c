"""Profiling: Chrome trace events with onnxruntime's fields, collected while a session
runs with `SessionOptions.enable_profiling`.

One Profiler per session.  While a run is profiled, `active()` returns it (a context
variable: other sessions and threads are not affected) and every place that runs
nodes records one "Node" event per node and run: native plans from the per-node times
the C core measures (`mlrt_plan_run_timed`), node-by-node runs and host operators
(If/Loop/Scan, their bodies' nodes included) timed here, OpenCL steps timed to the
end of their kernels.  The partitioner names the provider of each piece (`provider`).

Times are CLOCK_MONOTONIC (time.monotonic_ns, the clock the C core reads); events hold
them in microseconds since the profiler started, as onnxruntime's do, so a trace
loads in Perfetto or chrome://tracing.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
import time

import numpy as np

from ._lib import onnx_type

_active: contextvars.ContextVar = contextvars.ContextVar("mlrt_profiler", default=None)
_provider: contextvars.ContextVar = contextvars.ContextVar("mlrt_profiled_provider", default="")


def active() -> "Profiler | None":
    """The profiler of the run in progress, or None (the common case: nothing to record)."""
    return _active.get()


@contextlib.contextmanager
def profiling(profiler: "Profiler | None"):
    """Runs inside record into `profiler` (None: nothing is recorded)."""
    token = _active.set(profiler)
    try:
        yield profiler
    finally:
        _active.reset(token)


@contextlib.contextmanager
def provider(name: str):
    """Nodes run inside are attributed to the provider `name`."""
    token = _provider.set(name)
    try:
        yield
    finally:
        _provider.reset(token)


def _type_shape(value) -> dict:
    """{"float": [1, 3, 224, 224]}: a value's element type (onnxruntime's spelling) and shape."""
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        kind = "sequence" if isinstance(value, (list, tuple)) else "map" if isinstance(value, dict) else "unknown"
        return {kind: [len(value)] if hasattr(value, "__len__") else []}
    from onnx import TensorProto
    code = onnx_type(np.dtype(dtype)) if np.dtype(dtype).kind not in "OUS" else TensorProto.STRING
    name = TensorProto.DataType.Name(code).lower() if code else np.dtype(dtype).name
    return {name: [int(d) for d in shape]}


class Profiler:
    """The events of one session, written as a JSON array by `write`."""

    def __init__(self):
        self.start_ns = time.monotonic_ns()
        self._events: list[dict] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def event(self, cat: str, name: str, start_ns: int, end_ns: int, args: dict | None = None) -> None:
        """A complete ("X") event from start_ns to end_ns (monotonic nanoseconds)."""
        e = {"cat": cat, "pid": self._pid, "tid": threading.get_native_id(),
             "dur": max(end_ns - start_ns, 0) / 1000, "ts": (start_ns - self.start_ns) / 1000, "ph": "X",
             "name": name, "args": args or {}}
        with self._lock:
            self._events.append(e)

    def node(self, name: str, op_type: str, start_ns: int, end_ns: int, inputs, outputs,
             provider: str | None = None, kernel_path: str | None = None) -> None:
        """A "Node" event: one node of the graph run once; inputs and outputs are arrays,
        device tensors or planning infos (anything with dtype and shape).  The provider
        is the one `provider()` set unless given; kernel_path, where the C kernel named
        the path it ran ("conv/winograd/avx512", "sgemm/neon"), is args["kernel_path"]."""
        args = {"op_name": op_type, "provider": _provider.get() if provider is None else provider,
                "input_type_shape": [_type_shape(v) for v in inputs if v is not None],
                "output_type_shape": [_type_shape(v) for v in outputs if v is not None]}
        if kernel_path:
            args["kernel_path"] = kernel_path
        self.event("Node", f"{name or op_type}_kernel_time", start_ns, end_ns, args)

    def events(self) -> list[dict]:
        with self._lock:
            return list(self._events)

    def write(self, prefix: str) -> str:
        """Write the trace to `<prefix>_<date>_<time>.json` and return that path."""
        path = f"{prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json"
        with open(path, "w") as f:
            json.dump(self.events(), f, indent=0)
        return path


def summarize(events: list[dict], skip_runs: int = 1) -> dict:
    """Time per op type and per node over the runs of a trace (the first `skip_runs`
    runs left out: they plan), in microseconds: {"runs": n, "run_us": [...],
    "by_op": {op: {"nodes": k, "us": total}}, "by_node": {name: {"op": op, "provider":
    p, "us": total}}}.  Nodes inside subgraphs count on their own and inside the host
    node that ran them."""
    runs = sorted((e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"),
                  key=lambda e: e["ts"])
    kept = runs[skip_runs:] if len(runs) > skip_runs else runs
    since = kept[0]["ts"] if kept else 0.0
    by_op: dict[str, dict] = {}
    by_node: dict[str, dict] = {}
    for e in events:
        if e.get("cat") != "Node" or e["ts"] < since:
            continue
        op = e["args"].get("op_name", "")
        name = e["name"].removesuffix("_kernel_time")
        node = by_node.setdefault(name, {"op": op, "provider": e["args"].get("provider", ""), "us": 0.0})
        node["us"] += e["dur"]
        by_op.setdefault(op, {"nodes": set(), "us": 0.0})
        by_op[op]["nodes"].add(name)
        by_op[op]["us"] += e["dur"]
    for v in by_op.values():
        v["nodes"] = len(v["nodes"])
    return {"runs": len(kept), "run_us": [r["dur"] for r in kept], "by_op": by_op, "by_node": by_node}
