"""Planning and running a graph on the C kernels.

For each distinct set of input shapes and types a *plan* is made once: the shape of
every value is resolved (values that depend only on shapes and constants, such as
Shape -> Gather -> Concat chains, are computed here), intermediate buffers are laid
out in one arena with reuse, and the nodes become one native plan that runs the
whole graph in a single C call.  A graph whose shapes depend on data computed at run
time runs node by node instead ("eager"), each node still one C kernel call.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from .._errors import InvalidModel, NotImplemented, ResourceExhausted
from . import _lib
from . import graph as graph_mod
from .graph import Graph
from .ops import Info, Op, lookup
from .planner import plan_memory

_DYNAMIC = object()  # marker: this signature needs eager execution
_MAX_PLANS = 16


def _memory_limit() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


MEMORY_LIMIT = _memory_limit()  # no single tensor or arena may exceed physical memory


def allocate(shape, dtype, where: str) -> np.ndarray:
    """np.empty, refusing sizes over the memory limit with ResourceExhausted (never an OOM kill)."""
    dtype = np.dtype(dtype)
    count = 1
    for d in shape:
        count *= int(d)
    if count * dtype.itemsize > MEMORY_LIMIT:
        raise ResourceExhausted(f"{where}: a {list(shape)} {dtype.name} tensor needs {count * dtype.itemsize:,} bytes, "
                                f"over the limit of {MEMORY_LIMIT:,}")
    try:
        return np.empty(shape, dtype)
    except (MemoryError, ValueError) as exc:
        raise ResourceExhausted(f"{where}: cannot allocate a {list(shape)} {dtype.name} tensor ({exc})") from None


def make_op(node, graph: Graph) -> Op:
    opset = graph.opset(node.domain)
    cls = lookup(node.domain, node.op_type, opset)
    if cls is None:
        dom = node.domain or "ai.onnx"
        raise NotImplemented(f"node '{node.name or node.op_type}': operator {dom}::{node.op_type} "
                             f"(opset {opset}) is not implemented")
    return cls(node, opset)


class ThreadPool:
    """The session's intra-op pool (a native object), freed with the session."""

    def __init__(self, n_threads: int):
        ffi, lib = _lib.ffi(), _lib.lib()
        pool = lib.mlrt_threadpool_create(int(n_threads))
        if pool == ffi.NULL:
            _lib.raise_status(3, "thread pool")
        self.handle = ffi.gc(pool, lib.mlrt_threadpool_destroy)
        self.size = lib.mlrt_threadpool_size(pool)


def _kernel_index(op: Op, launch, inputs: list[Info | None]) -> int:
    ti = launch.type_input
    dtype = inputs[ti].dtype if ti < len(inputs) and inputs[ti] is not None else None
    k = _lib.find_kernel(op.domain, launch.kernel, op.opset, dtype)
    if k < 0:
        tname = np.dtype(dtype).name if dtype is not None else "any type"
        raise NotImplemented(f"{op.where}: no CPU kernel for {launch.kernel} (opset {op.opset}) on {tname}")
    return k


def _describe(descs, slots, i, info: Info | None, view, slot) -> None:
    if info is None:
        descs[i].dtype = 0
        descs[i].rank = 0
        slots[i].base, slots[i].offset = -1, 0
        return
    shape, strides = (view.shape, view.strides) if view is not None else (info.shape, None)
    _lib.fill_tensor(descs[i], info.dtype, shape, strides)
    slots[i].base, slots[i].offset = slot


def run_eager(op: Op, arrays: list[np.ndarray | None], pool: ThreadPool | None) -> list[np.ndarray | None]:
    """Run one node on concrete arrays (used for constant folding and dynamic graphs)."""
    infos = [Info.of(a) if a is not None else None for a in arrays]
    outs = op.infer(infos)
    if all(o is None or o.value is not None for o in outs):
        return [o.value if o is not None else None for o in outs]
    if op.kernel is None:
        raise InvalidModel(f"{op.where}: could not compute its outputs")
    launch = op.launch(infos, outs)
    kernel = _kernel_index(op, launch, infos)
    results = [allocate(o.shape, o.dtype, op.where) if o is not None else None for o in outs]
    ffi, lib = _lib.ffi(), _lib.lib()
    arrays = list(arrays) + [np.asarray(e) for e in launch.extra]
    n_in, n_out = len(arrays), len(results)
    ins, outs_d = ffi.new("mlrt_tensor[]", max(n_in, 1)), ffi.new("mlrt_tensor[]", max(n_out, 1))
    keep = []
    for i, a in enumerate(arrays):
        if a is None:
            ins[i].dtype = 0
            continue
        a = np.require(a, requirements="C")  # (ascontiguousarray would make rank 0 rank 1)
        keep.append(a)
        view = launch.views.get(i)
        _lib.fill_tensor(ins[i], a.dtype, view.shape if view else a.shape, view.strides if view else None,
                         _lib.array_pointer(a))
    for i, r in enumerate(results):
        if r is None:
            outs_d[i].dtype = 0
            continue
        _lib.fill_tensor(outs_d[i], r.dtype, r.shape, None, _lib.array_pointer(r))
    _, pptr, psize = params = _lib.pack_params(op.params, launch.params)
    pool_handle = pool.handle if pool is not None else ffi.NULL
    status = lib.mlrt_kernel_run(kernel, pool_handle, ins, n_in, outs_d, n_out, pptr, psize)
    del params, keep
    _lib.raise_status(status, op.where)
    return results


@dataclass
class _Step:
    op: Op
    inputs: list
    outputs: list
    launch: object
    kernel: int


class StaticPlan:
    """A native plan for one input signature, plus what run() needs to bind it."""

    def __init__(self, input_names, constants, output_names, infos, steps, pool):
        ffi, lib = _lib.ffi(), _lib.lib()
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        constants = dict(constants)
        extra_names = []  # per step: names given to its Launch.extra arrays
        for k, step in enumerate(steps):
            extra_names.append([f"\0extra{k}.{j}" for j in range(len(step.launch.extra))])
            constants.update(zip(extra_names[-1], (np.asarray(e) for e in step.launch.extra)))
        self.constants = [np.require(c, requirements="C") for c in constants.values()]
        # externals: graph inputs, then constants, then graph outputs (base = index + 1)
        external = {name: i + 1 for i, name in enumerate(self.input_names)}
        for i, name in enumerate(constants):
            external[name] = len(self.input_names) + i + 1
        n_fixed = len(self.input_names) + len(self.constants)
        self.output_bases = {}
        for name in self.output_names:
            if name not in external:
                external[name] = n_fixed + len(self.output_bases) + 1
                self.output_bases[name] = external[name]
        self.output_infos = {n: infos[n] for n in self.output_names}
        self.n_external = n_fixed + len(self.output_bases)
        sizes = {name: infos[name].size * infos[name].dtype.itemsize
                 for s in steps for name in s.op.node.output if name and name not in external}
        offsets, arena = plan_memory(steps, sizes)
        if arena > MEMORY_LIMIT:
            raise ResourceExhausted(f"the plan needs a {arena:,}-byte arena, over the limit of {MEMORY_LIMIT:,}")
        records = ffi.new("mlrt_node_record[]", max(len(steps), 1))
        keep = []
        for r, step, extras in zip(records, steps, extra_names):
            node = step.op.node
            n_in = len(step.inputs) + len(extras)
            ins = ffi.new("mlrt_tensor[]", max(n_in, 1))
            in_slots = ffi.new("mlrt_slot[]", max(n_in, 1))
            outs = ffi.new("mlrt_tensor[]", max(len(step.outputs), 1))
            out_slots = ffi.new("mlrt_slot[]", max(len(step.outputs), 1))
            for i, info in enumerate(step.inputs):
                name = node.input[i] if i < len(node.input) else ""
                slot = (external[name], 0) if name in external else (0, offsets.get(name, 0))
                _describe(ins, in_slots, i, info, step.launch.views.get(i), slot)
            for j, name in enumerate(extras):
                _describe(ins, in_slots, len(step.inputs) + j, Info.of(constants[name]), None, (external[name], 0))
            for i, info in enumerate(step.outputs):
                name = node.output[i] if i < len(node.output) else ""
                if not name:
                    info = None
                slot = (external[name], 0) if name in external else (0, offsets.get(name, 0))
                _describe(outs, out_slots, i, info, None, slot)
            params, pptr, psize = _lib.pack_params(step.op.params, step.launch.params)
            cname = ffi.new("char[]", step.op.name.encode())
            keep += [ins, in_slots, outs, out_slots, params, cname]
            r.kernel, r.n_inputs, r.n_outputs = step.kernel, n_in, len(step.outputs)
            r.inputs, r.input_slots, r.outputs, r.output_slots = ins, in_slots, outs, out_slots
            r.params, r.params_size, r.name = pptr, psize, cname
        plan = lib.mlrt_plan_create(records, len(steps), self.n_external, arena)
        if plan == ffi.NULL:
            _lib.raise_status(4, "plan")
        self.handle = ffi.gc(plan, lib.mlrt_plan_destroy)
        self.arena_bytes = arena
        self.pool = pool
        self._arenas: list = []
        self._arena_lock = threading.Lock()
        self._const_ptrs = [_lib.array_pointer(c) for c in self.constants]

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        ffi, lib = _lib.ffi(), _lib.lib()
        ext = ffi.new("void *[]", max(self.n_external, 1))
        keep = []
        for i, name in enumerate(self.input_names):
            a = np.require(feeds[name], requirements="C")
            keep.append(a)
            ext[i] = _lib.array_pointer(a)
        base = len(self.input_names)
        for i, p in enumerate(self._const_ptrs):
            ext[base + i] = p
        results = {}
        for name, b in self.output_bases.items():
            info = self.output_infos[name]
            results[name] = allocate(info.shape, info.dtype, f"output '{name}'")
            ext[b - 1] = _lib.array_pointer(results[name])
        arena = self._take_arena()
        try:
            status = lib.mlrt_plan_run(self.handle, self.pool.handle, ext,
                                       _lib.array_pointer(arena) if arena is not None else ffi.NULL)
        finally:
            if arena is not None:
                with self._arena_lock:
                    self._arenas.append(arena)
        _lib.raise_status(status)
        return results

    def _take_arena(self):
        """A 64-byte-aligned arena, reused across runs (one per concurrent run), so large
        intermediate buffers are not page-faulted in afresh every time."""
        if not self.arena_bytes:
            return None
        with self._arena_lock:
            if self._arenas:
                return self._arenas.pop()
        raw = allocate((self.arena_bytes + 64,), np.uint8, "arena")
        start = (-raw.ctypes.data) % 64
        return raw[start:start + self.arena_bytes]


class Program:
    """A graph ready to run on the C kernels (the CPU provider's compiled form)."""

    def __init__(self, graph: Graph, pool: ThreadPool):
        self.graph = graph
        self.pool = pool
        self.ops = [make_op(node, graph) for node in graph.nodes]
        self._has_host_ops = any(op.host for op in self.ops)
        self.input_names = ([v.name for v in graph.inputs] + [v.name for v in graph.overridable]
                            + list(graph.outer))
        self._subprograms: dict = {}
        self.output_names = [v.name for v in graph.outputs]
        self._plans: dict = {}
        self._lock = threading.Lock()

    # -- planning ------------------------------------------------------------------------
    def _signature(self, feeds):
        if any(not isinstance(feeds[n], np.ndarray) or feeds[n].dtype.kind in "OUS"
               for n in self.input_names if n in feeds):
            return None  # sequences, optionals, strings: always eager
        return tuple((n, feeds[n].dtype.str, feeds[n].shape) for n in self.input_names if n in feeds)

    def _make_plan(self, feeds):
        infos: dict[str, Info] = {}
        constants: dict[str, np.ndarray] = {}
        for name, value in self.graph.initializers.items():
            if name not in feeds:
                infos[name] = Info.of(value)
                constants[name] = value
        for name in self.input_names:
            if name in feeds:
                a = feeds[name]
                infos[name] = Info(a.dtype, tuple(a.shape))
        steps = []
        for op in self.ops:
            node = op.node
            ins = [infos[n] if n else None for n in node.input]
            if any(i < len(ins) and ins[i] is not None and ins[i].value is None for i in op.value_inputs):
                return _DYNAMIC
            outs = op.infer(ins)
            present = [i for i in ins if i is not None]
            if all(o.value is not None for o in outs):
                pass
            elif op.kernel is not None and op.deterministic and all(i.value is not None for i in present):
                values = run_eager(op, [i.value if i is not None else None for i in ins], self.pool)
                outs = [Info.of(v) if v is not None else o for v, o in zip(values, outs)]
            else:
                launch = op.launch(ins, outs)
                steps.append(_Step(op, ins, outs, launch, _kernel_index(op, launch, ins)))
                for name, o in zip(node.output, outs):
                    if name:
                        infos[name] = Info(o.dtype, tuple(o.shape))
                continue
            for name, o in zip(node.output, outs):
                if name:
                    infos[name] = o
                    constants[name] = o.value
        used = {n for s in steps for n in s.op.node.input} | set(self.output_names)
        constants = {k: v for k, v in constants.items() if k in used}
        input_names = [n for n in self.input_names if n in feeds]
        outputs_from_steps = {n for s in steps for n in s.op.node.output}
        out_names = [n for n in self.output_names if n in outputs_from_steps]
        plan = StaticPlan(input_names, constants, out_names, infos, steps, self.pool)
        plan.fixed_outputs = {n: infos[n].value for n in self.output_names if n not in outputs_from_steps}
        return plan

    def _plan_for(self, feeds):
        key = self._signature(feeds)
        if key is None or self._has_host_ops:
            return _DYNAMIC
        with self._lock:
            plan = self._plans.get(key)
        if plan is None:
            plan = self._make_plan(feeds)
            with self._lock:
                if len(self._plans) >= _MAX_PLANS:
                    self._plans.pop(next(iter(self._plans)))
                self._plans[key] = plan
        return plan

    # -- running ---------------------------------------------------------------------------
    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        plan = self._plan_for(feeds)
        if plan is _DYNAMIC:
            return self._run_eager(feeds)
        results = plan.run(feeds)
        for name, value in plan.fixed_outputs.items():
            results[name] = np.array(feeds[name] if value is None else value, copy=True)
        return results

    def _run_eager(self, feeds):
        values = dict(self.graph.initializers)
        values.update(feeds)
        for op in self.ops:
            arrays = [values[n] if n else None for n in op.node.input]
            if op.host or (type(op).run_host is not Op.run_host and _needs_host(op, arrays)):
                outs = op.run_host(arrays, _HostRuntime(self, values))
            else:
                outs = run_eager(op, arrays, self.pool)
            for name, v in zip(op.node.output, outs):
                if name:
                    values[name] = v
        fed = {id(v) for v in feeds.values()}
        return {n: (_copy_value(values[n]) if id(values[n]) in fed else values[n]) for n in self.output_names}

    # -- subgraphs (bodies of If / Loop / Scan) ----------------------------------------------
    def subprogram(self, body) -> "Program":
        key = id(body)
        with self._lock:
            sub = self._subprograms.get(key)
        if sub is None:
            visible = tuple(self._visible_names())
            sub = Program(graph_mod.from_graph_proto(body, self.graph.opsets, visible), self.pool)
            with self._lock:
                self._subprograms[key] = sub
        return sub

    def _visible_names(self):
        names = set(self.input_names) | set(self.graph.initializers) | set(self.graph.outer)
        names |= {o for n in self.graph.nodes for o in n.output if o}
        return names


def _needs_host(op: Op, arrays) -> bool:
    """A value a C kernel cannot take: a sequence, an empty optional, a string array."""
    for name, a in zip(op.node.input, arrays):
        if a is None and name:
            return True
        if a is not None and (not isinstance(a, np.ndarray) or a.dtype.kind in "OUS"):
            return True
    return False


def _copy_value(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, list):
        return [_copy_value(x) for x in v]
    return v


class _HostRuntime:
    """What a host operator may use: the values in scope and subgraph execution."""

    def __init__(self, program: Program, values: dict):
        self.program = program
        self.values = values

    def run_subgraph(self, body, inputs: list) -> list:
        """Run a body graph on positional inputs, enclosing values visible; outputs in order."""
        sub = self.program.subprogram(body)
        feeds = {v.name: x for v, x in zip(sub.graph.inputs, inputs)}
        for name in sub.graph.outer:
            if name not in self.values:
                raise InvalidModel(f"a subgraph reads '{name}', which is not defined in any enclosing graph")
            feeds[name] = self.values[name]
        results = sub.run(feeds)
        return [results[n] for n in sub.output_names]
