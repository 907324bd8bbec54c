"""The OpenCL provider's side of planning: a partition planned once per input
signature by the shared skeleton (native/plan), run as a list of kernel dispatches on
one in-order queue, its values never leaving the device.

The walk (plan/walk.py) works out every value's shape with the operators' own `infer`
and folds what is constant on the CPU; each other node's recorder
(_recorders.recorder) records its kernels through a `StepBuilder`.  Running allocates
each value from the device's buffer pool when it is made and gives it back after its
last reader (plan/memory.py's lifetimes); the queue's order keeps reuse safe.
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..._errors import DeviceError, InvalidArgument, MlrtError
from .. import profile
from .._lib import np_type
from ..ops import make_op
from ..plan.cache import PlanCache, signature
from ..plan.memory import lifetimes, releases, root
from ..plan.walk import Dynamic, known_infos, walk
from ._drivers import cl
from ._memory import DeviceTensor
from ._programs import struct_bytes
from ._recorders import find_recorder


@dataclass(frozen=True)
class _Ref:
    kind: str   # "value" (a tensor made or fed at run time) or "scratch"
    key: object  # value name, or scratch index


@dataclass
class _Dispatch:
    kernel: object
    global_size: tuple
    local_size: tuple | None
    args: list


@dataclass
class _Step:
    op: object               # the node's operator; in_infos, out_infos: its values (for profiles)
    in_infos: list
    out_infos: list
    outputs: list            # (name, dtype, shape, bytes) of values this node allocates
    aliases: list            # (name, source name, dtype, shape): outputs sharing an input's buffer
    scratch: list            # byte sizes
    dispatches: list = field(default_factory=list)
    release: list = field(default_factory=list)  # buffer roots whose last reader is this step


class StepBuilder:
    """What a recorder uses to record one node's kernels (see _recorders.Recorder)."""

    def __init__(self, plan: "OpenCLPlan", op, recorder, inputs, outputs):
        self._plan, self.op, self._recorder = plan, op, recorder
        self.inputs, self.outputs = inputs, outputs
        self.device = plan.device
        self.step = _Step(op, inputs, outputs, [], [], [])
        self._aliased: set[int] = set()

    def kernel(self, name: str, dtype=None):
        """Kernel `name` of the recorder's family built for `dtype` (default: the type input's)."""
        if dtype is None:
            dtype = self.inputs[self._recorder.type_input].dtype
        return self.device.kernel(self._recorder.family, dtype, name)

    def input(self, i: int):
        name = self.op.node.input[i]
        info = self.inputs[i]
        if info is not None and info.value is not None:
            return self._plan.constant_tensor(name, info.value).buffer
        return _Ref("value", name)

    def output(self, j: int):
        return _Ref("value", self.op.node.output[j])

    def alias(self, j: int, i: int) -> None:
        """Output j is input i's bytes under a new shape (Reshape, Flatten, Identity...)."""
        self._aliased.add(j)
        o = self.outputs[j]
        self.step.aliases.append((self.op.node.output[j], self.op.node.input[i], o.dtype, o.shape))

    def scratch(self, nbytes: int):
        self.step.scratch.append(int(nbytes))
        return _Ref("scratch", len(self.step.scratch) - 1)

    def constant(self, array) -> object:
        """A device buffer holding `array` for the plan's lifetime (tables, packed weights)."""
        return self._plan.upload(np.asarray(array)).buffer

    def shared_constant(self, key, make) -> object:
        """Like constant(make()), but made once per node and kept by the partition, so
        every plan (input signature) shares it: packed weights."""
        shared = self._plan.partition.shared_constants
        full = (self.op.where, key)
        t = shared.get(full)
        if t is None:
            t = shared[full] = self.device.upload(np.asarray(make()), blocking=True)
        return t.buffer

    def error_flag(self, message: str) -> tuple:
        """Two kernel arguments, (`__global int *err`, `int code`), for a kernel that meets
        bad run-time data (an index out of range): it stores `code` in *err, and the run
        then raises InvalidArgument(message) -- never a silently wrong result."""
        plan = self._plan
        plan.error_messages.append(message)
        return plan.error_buffer(), np.int32(len(plan.error_messages))

    def view(self, shape, strides) -> object:
        """A constant `mlrt_view` (_view.h) describing a strided view."""
        return self.constant(struct_bytes("mlrt_view", rank=len(shape), shape=shape, strides=strides))

    def enqueue(self, kernel, global_size, local_size, *args) -> None:
        global_size = tuple(int(g) for g in global_size)
        if any(g <= 0 for g in global_size):
            return  # nothing to compute (an empty tensor)
        local = tuple(int(x) for x in local_size) if local_size is not None else None
        self.step.dispatches.append(_Dispatch(kernel, global_size, local, list(args)))

    def finish(self) -> _Step:
        for j, (name, o) in enumerate(zip(self.op.node.output, self.outputs)):
            if name and o is not None and j not in self._aliased:
                self.step.outputs.append((name, np.dtype(o.dtype), tuple(o.shape), o.size * np.dtype(o.dtype).itemsize))
        return self.step


class OpenCLPlan:
    def __init__(self, partition: "OpenCLPartition", feeds: dict):
        # a proxy: the partition holds its plans, and a plan holding the partition back made
        # a cycle that kept every device buffer of a dropped session until the cyclic GC ran
        self.partition = weakref.proxy(partition)
        self.device = partition.device
        self._uploads: list = []
        self.error_messages: list[str] = []
        self._error = None
        self._lock = threading.Lock()
        infos = known_infos(partition.graph.initializers, feeds, partition.value_names)
        try:
            self.steps: list[_Step] = walk(partition.ops, infos, self._record)
        except Dynamic as exc:
            raise DeviceError(f"OpenCL needs shapes known when a partition is planned: {exc}") from None
        self.fixed = {n: infos[n].value for n in partition.output_names if infos[n].value is not None}
        self._plan_releases(set(feeds))

    def _record(self, op, ins, outs) -> _Step:
        recorder = find_recorder(op.domain, op.op_type)
        k = StepBuilder(self, op, recorder, ins, outs)
        recorder.fn(k, op, ins, outs)
        return k.finish()

    def error_buffer(self):
        if self._error is None:
            self._error = self.upload(np.zeros(1, np.int32))
        return self._error.buffer

    # constants live on the device as long as the plan
    def upload(self, array: np.ndarray) -> DeviceTensor:
        t = self.device.upload(array, blocking=True)  # plan time: no host copy kept alive
        self._uploads.append(t)
        return t

    def constant_tensor(self, name: str, value: np.ndarray) -> DeviceTensor:
        shared = self.partition.shared_constants
        t = shared.get(name) if name in self.partition.graph.initializers else None
        if t is None:
            t = self.upload(value)
            if name in self.partition.graph.initializers:
                shared[name] = t
        return t

    def _plan_releases(self, fed: set) -> None:
        """Each buffer goes back to the pool after the last step reading any name that
        shares it (an alias reads its source when it is made); partition inputs and
        outputs, and constants, are never given back here."""
        within = {name: (src, 0) for s in self.steps for name, src, *_ in s.aliases}

        def buffer(name):
            return root(within, name)[0]

        reads = [{buffer(a.key) for d in s.dispatches for a in d.args
                  if isinstance(a, _Ref) and a.kind == "value"} | {buffer(src) for _, src, *_ in s.aliases}
                 for s in self.steps]
        spans = lifetimes(reads, [[name for name, *_ in s.outputs] for s in self.steps])
        keep = {buffer(n) for n in self.partition.output_names} | {buffer(n) for n in fed} \
            | set(self.partition.graph.initializers)  # constants outlive every run (an alias may root there)
        for step, names in zip(self.steps, releases(spans, len(self.steps), keep)):
            step.release = names

    # -- running --------------------------------------------------------------------------------
    def run(self, feeds: dict) -> dict:
        device = self.device
        values: dict = {}
        for name, v in feeds.items():
            values[name] = v if isinstance(v, DeviceTensor) else None
        queue = device.queue
        with self._lock:  # kernel objects hold their arguments: one run of a plan at a time
            if self._error is not None:
                self._error.write(np.zeros(1, np.int32))
            profiler = profile.active()
            for step in self.steps:
                start = time.monotonic_ns() if profiler is not None else 0
                for name, dtype, shape, nbytes in step.outputs:
                    values[name] = DeviceTensor(device.allocate(nbytes), dtype, shape, device)
                for name, src, dtype, shape in step.aliases:
                    values[name] = DeviceTensor(self._tensor(values, src, feeds).buffer, dtype, shape, device)
                scratch = [device.allocate(n) for n in step.scratch]
                for d in step.dispatches:
                    args = [self._resolve(a, values, scratch, feeds) for a in d.args]
                    d.kernel.set_args(*args)
                    cl.enqueue_nd_range_kernel(queue, d.kernel, d.global_size, d.local_size)
                if profiler is not None:  # the step's kernels timed to their end
                    queue.finish()
                    profiler.node(step.op.node.name, step.op.op_type, start, time.monotonic_ns(), step.in_infos,
                                  step.out_infos)
                for b in scratch:
                    b.release()
                for name in step.release:
                    t = values.get(name)
                    if t is not None and hasattr(t.buffer, "release"):
                        t.buffer.release()
            if self._error is not None:
                code = int(self._error.numpy()[0])
                if code:
                    raise InvalidArgument(self.error_messages[code - 1])
        out = {}
        for name in self.partition.output_names:
            if name in self.fixed:
                out[name] = np.array(self.fixed[name], copy=True)
            elif name in values and values[name] is not None:
                out[name] = values[name]
            else:
                out[name] = feeds[name]
        return out

    def _tensor(self, values, name, feeds) -> DeviceTensor:
        t = values.get(name)
        if t is None:
            if name in feeds and isinstance(feeds[name], np.ndarray):
                t = values[name] = self.device.upload(feeds[name])
            else:
                init = self.partition.graph.initializers[name]
                t = values[name] = self.constant_tensor(name, init)
        return t

    def _resolve(self, a, values, scratch, feeds):
        if isinstance(a, _Ref):
            if a.kind == "scratch":
                return scratch[a.key]
            return self._tensor(values, a.key, feeds).buffer
        return a


class OpenCLPartition:
    """The OpenCL provider's compiled form of a subgraph: run(feeds) -> outputs, where
    tensors are DeviceTensors (host arrays are accepted for shape-like inputs)."""

    def __init__(self, graph, device):
        self.graph = graph
        self.device = device
        self.ops = [make_op(n, graph) for n in graph.nodes]
        self.output_names = [v.name for v in graph.outputs]
        self.input_names = [v.name for v in graph.inputs]
        self.value_names = {op.node.input[i] for op in self.ops for i in op.value_inputs if i < len(op.node.input)}
        self.shared_constants: dict = {}  # initializers by name, packed weights by (node, key)
        self.plans = PlanCache()
        # build every program this partition can need now, so a failure shows at compile time
        for op in self.ops:
            recorder = find_recorder(op.domain, op.op_type)
            if recorder is None:
                raise DeviceError(f"{op.where}: no OpenCL recorder for {op.op_type}")
            for dtype in (self._dtypes(op, recorder) if recorder.family else ()):
                device.program(recorder.family, recorder.program_for(dtype))

    def _dtypes(self, op, recorder) -> list:
        names = [n for n in op.node.input if n]
        i = recorder.type_input
        name = op.node.input[i] if i < len(op.node.input) else (names[0] if names else None)
        dt = value_dtype(self.graph, name) if name else None
        return [dt] if dt is not None else []

    def run(self, feeds: dict) -> dict:
        key = signature(feeds, sorted(feeds), self.value_names)
        try:
            return self.plans.get(key, lambda: OpenCLPlan(self, feeds)).run(feeds)
        except MlrtError:
            raise
        except Exception as exc:
            if cl is not None and isinstance(exc, cl.Error):
                raise DeviceError(f"OpenCL device {self.device.name}: {str(exc).strip()}") from None
            raise


def value_dtype(graph, name: str):
    """The element type of a value before any run (numpy dtype), or None if unknown."""
    if name in graph.initializers:
        return graph.initializers[name].dtype
    vt = graph.type_of(name)
    if vt is None or vt.kind != "tensor" or not vt.elem_type:
        return None
    try:
        return np_type(vt.elem_type)
    except KeyError:  # an element type numpy has no dtype for
        return None
