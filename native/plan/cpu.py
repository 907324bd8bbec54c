"""The CPU provider's compiled form of a partition: planned and run on the C kernels.

For each distinct set of input shapes and types a plan is made once by the shared walk
(walk.py): the shape of every value is resolved (values that depend only on shapes and
constants, such as Shape -> Gather -> Concat chains, are folded), each other node is
recorded as a NativeStep, and the steps become one native plan that runs the whole
partition in a single C call (native.py).  A graph whose shapes depend on data computed
at run time runs node by node instead ("eager"), each node still one C kernel call;
host operators (sequences, maps, strings, If/Loop/Scan) run here too, with their bodies
as partitions of their own.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..._errors import InvalidModel
from .. import graph as graph_mod
from .. import profile, terminate
from .._lib import ThreadPool
from ..graph import Graph
from ..ops import Op, make_op
from .cache import PlanCache, signature
from .eager import computes_halves_in_float, kernel_index, run_eager
from .loop import run_native as run_native_loop
from .loop import run_native_scan
from .native import NativePlan, NativeStep
from .walk import Dynamic, known_infos, walk

_DYNAMIC = object()  # marker: this signature needs eager execution


class CPUPartition:
    """A graph ready to run on the C kernels."""

    def __init__(self, graph: Graph, pool: ThreadPool):
        self.graph = graph
        self.pool = pool
        self.ops = [make_op(node, graph) for node in graph.nodes]
        self._has_host_ops = any(op.host for op in self.ops)
        self.input_names = ([v.name for v in graph.inputs] + [v.name for v in graph.overridable]
                            + list(graph.outer))
        self._subprograms: dict = {}
        self.output_names = [v.name for v in graph.outputs]
        self.plans = PlanCache()
        self._lock = threading.Lock()
        self._prefix, self._rest = self._split_at_host_ops()

    def _split_at_host_ops(self):
        """With host operators in the graph, the nodes that depend on none of them (a
        classifier before its ZipMap, the layers before a Loop) form a prefix that still
        runs as one native plan; the rest runs node by node after it."""
        if not self._has_host_ops:
            return None, self.ops
        tainted: set[str] = set()
        prefix_ops, rest = [], []
        for op in self.ops:
            reads = self.graph.reads(op.node)
            if op.host or any(n in tainted for n in reads):
                tainted.update(o for o in op.node.output if o)
                rest.append(op)
            else:
                prefix_ops.append(op)
        if not prefix_ops:
            return None, self.ops
        made = {o for op in prefix_ops for o in op.node.output if o}
        needed = {n for op in rest for n in self.graph.reads(op.node)} | set(self.output_names)
        g = self.graph
        sub = Graph([op.node for op in prefix_ops], g.initializers, list(g.inputs), list(g.overridable),
                    [graph_mod.ValueType(n, 0, None) for n in sorted(made & needed)], g.opsets,
                    g.value_types, None, list(g.outer))
        return CPUPartition(sub, self.pool), rest

    # -- planning ------------------------------------------------------------------------
    def _record(self, op, ins, outs) -> NativeStep:
        launch = op.launch(ins, outs)
        if computes_halves_in_float(op, launch, ins):
            raise Dynamic(f"{op.where}: float16 through a float32 kernel runs node by node")
        if op.moves and any(ins[k] is not None and np.dtype(ins[k].dtype).kind in "OUS"
                            for k in op.moved_inputs(len(ins))):
            raise Dynamic(f"{op.where}: strings move as element numbers, node by node")
        return NativeStep(op, ins, outs, launch, kernel_index(op, launch, ins))

    def _make_plan(self, feeds):
        infos = known_infos(self.graph.initializers, {n: feeds[n] for n in self.input_names if n in feeds})
        try:
            steps = walk(self.ops, infos, self._record, self.pool)
        except Dynamic:
            return _DYNAMIC
        used = {n for s in steps for n in s.op.node.input} | set(self.output_names)
        constants = {k: i.value for k, i in infos.items()
                     if k in used and i.value is not None and k not in feeds}
        input_names = [n for n in self.input_names if n in feeds]
        outputs_from_steps = {n for s in steps for n in s.op.node.output}
        out_names = [n for n in self.output_names if n in outputs_from_steps]
        plan = NativePlan(input_names, constants, out_names, infos, steps, self.pool)
        plan.fixed_outputs = {n: infos[n].value for n in self.output_names if n not in outputs_from_steps}
        return plan

    def _plan_for(self, feeds):
        if self._has_host_ops:
            return _DYNAMIC
        key = signature(feeds, self.input_names)
        if key is None:
            return _DYNAMIC
        return self.plans.get(key, self._make_plan, feeds)

    # -- running ---------------------------------------------------------------------------
    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        plan = self._plan_for(feeds)
        if plan is _DYNAMIC:
            return self._run_eager(feeds)
        results = plan.run(feeds)
        if plan.fixed_outputs:
            for name, value in plan.fixed_outputs.items():
                results[name] = np.array(feeds[name] if value is None else value, copy=True)
        return results

    def quick_run(self, feeds: dict, output_names):
        """The plan's QuickRun (native.py) for these feeds, or None where they run another way."""
        if self._has_host_ops:
            return None
        plan = self._plan_for(feeds)
        if plan is _DYNAMIC or plan.fixed_outputs:
            return None
        return plan.quick_run(feeds, output_names)

    def _run_eager(self, feeds):
        values = dict(self.graph.initializers)
        values.update(feeds)
        if self._prefix is not None and not any(
                not isinstance(feeds[n], np.ndarray) for n in self._prefix.input_names if n in feeds):
            values.update(self._prefix.run({n: feeds[n] for n in self._prefix.input_names if n in feeds}))
            ops = self._rest
        else:
            ops = self.ops
        profiler = profile.active()
        flag = terminate.current()
        for op in ops:
            if flag is not None and flag[0]:
                terminate.check()
            arrays = [values[n] if n else None for n in op.node.input]
            start = time.monotonic_ns() if profiler is not None else 0
            if op.host or (type(op).run_host is not Op.run_host and _needs_host(op, arrays)):
                outs = op.run_host(arrays, _HostRuntime(self, values))
            else:
                outs = run_eager(op, arrays, self.pool)
            if profiler is not None:
                profiler.node(op.node.name, op.op_type, start, time.monotonic_ns(), arrays, outs)
            for name, v in zip(op.node.output, outs):
                if name:
                    values[name] = v
        fed = {id(v) for v in feeds.values()}
        return {n: (_copy_value(values[n]) if id(values[n]) in fed else values[n]) for n in self.output_names}

    # -- subgraphs (bodies of If / Loop / Scan) ----------------------------------------------
    def subprogram(self, body) -> "CPUPartition":
        key = id(body)
        with self._lock:
            sub = self._subprograms.get(key)
        if sub is None:
            visible = tuple(self._visible_names())
            sub = CPUPartition(graph_mod.from_graph_proto(body, self.graph.opsets, visible), self.pool)
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

    def __init__(self, program: CPUPartition, values: dict):
        self.program = program
        self.values = values

    def run_loop(self, body, state: list, first_index: int, trip: int | None):
        """Iterate a Loop body in C (loop.py): (state, scan chunks, iterations, still going),
        or None when it must iterate in Python."""
        sub = self.program.subprogram(body)
        return run_native_loop(sub, self._outer_feeds(sub), state, first_index, trip)

    def run_scan(self, body, state: list, slices: list, length: int):
        """Iterate a Scan body in C (loop.py): (state, scan outputs stacked on axis 0), or
        None when it must iterate in Python."""
        sub = self.program.subprogram(body)
        return run_native_scan(sub, self._outer_feeds(sub), state, slices, length)

    def _outer_feeds(self, sub) -> dict:
        feeds = {}
        for name in sub.graph.outer:
            if name not in self.values:
                raise InvalidModel(f"a subgraph reads '{name}', which is not defined in any enclosing graph")
            feeds[name] = self.values[name]
        return feeds

    def run_subgraph(self, body, inputs: list) -> list:
        """Run a body graph on positional inputs, enclosing values visible; outputs in order."""
        terminate.check()  # (a Loop iterated in Python runs its body here, once per iteration)
        sub = self.program.subprogram(body)
        feeds = {v.name: x for v, x in zip(sub.graph.inputs, inputs)}
        feeds.update(self._outer_feeds(sub))
        results = sub.run(feeds)
        return [results[n] for n in sub.output_names]
