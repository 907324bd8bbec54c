"""The CPU provider's compiled form of a partition: planned and run on the C kernels.

For each distinct set of input shapes and types a plan is made once by the shared walk
(walk.py): the shape of every value is resolved (values that depend only on shapes and
constants, such as Shape -> Gather -> Concat chains, are folded), each other node is
recorded as a NativeStep, and the steps become one native plan that runs the whole
partition in a single C call (native.py).  A graph whose shapes depend on data computed
at run time runs node by node instead ("eager"), each node still one C kernel call;
host operators (sequences, maps, strings, If/Loop/Scan) run here too, with their bodies
as partitions of their own.

Control flow at native speed: an If whose condition is known when the plan is made (it
follows from constants and shapes, or from small integer inputs that the signature
then holds by content, as a sample rate) is walked as its chosen branch's nodes, so the
plan holds the branch and no If runs.  A body (a branch decided at run time, a Loop or
Scan body) is a partition of its own, planned per signature like any other; the values
of enclosing graphs that its shapes are computed from (a batch size read before the If)
are part of that signature by content, so its Shape -> Gather -> Concat chains fold.
Contents that change from run to run (an enclosing Loop's counter) stop being planned
for after MAX_VALUE_PLANS of them.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import onnx
from onnx import helper

from ..._errors import InvalidModel
from .. import graph as graph_mod
from .. import profile, terminate
from .._lib import ThreadPool
from ..graph import Graph
from ..ops import Info, Op, Runtime, make_op
from ..ops.if_op import If
from ..ops.shape import Shape
from ..ops.size import Size
from . import memory
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
        self._renamed: dict = {}  # (id(body), names, tag) -> (the renamed copy, body): _renamed_subprogram
        self.output_names = [v.name for v in graph.outputs]
        self.plans = PlanCache()
        self._lock = threading.Lock()
        # values of enclosing graphs whose content the plan needs (a batch size read before
        # an If, used in a branch's Reshape): part of the signature, so shapes still fold
        # (and the inputs an If's condition is computed from: the plan then holds the branch)
        self._by_value = frozenset(read_as_values(self.ops) & set(graph.outer)
                                   | read_as_values(self.ops, conditions_only=True) & set(self.input_names))
        # host operators a plan can hold: an If (walked as its branch when its condition is
        # known) and a classifier that is one only to name its labels (named after the run)
        self._plannable = all(isinstance(op, If) or op.label_strings() is not None for op in self.ops if op.host)
        self._value_keys: set = set()  # the contents planned for so far (MAX_VALUE_PLANS at most)
        self._prefix, self._rest = self._split_at_host_ops()
        # what a node-by-node run walks: (op, input names, output names), read from the
        # protobuf nodes once here rather than at every run
        self._steps_all = [(op, tuple(op.node.input), tuple(op.node.output)) for op in self.ops]
        self._steps_rest = [(op, tuple(op.node.input), tuple(op.node.output)) for op in self._rest]
        self._quick_runs: tuple = ()  # QuickRuns of the signatures run last, for run_kept
        self._quick_misses = 0

    def _split_at_host_ops(self):
        """With host operators in the graph, the nodes that depend on none of them (a
        classifier before its ZipMap, the layers before a Loop) form a prefix that still
        runs as one native plan (a classifier naming string labels among them: the plan
        names them); the rest runs node by node after it."""
        if not self._has_host_ops:
            return None, self.ops
        tainted: set[str] = set()
        prefix_ops, rest = [], []
        for op in self.ops:
            reads = self.graph.reads(op.node)
            if (op.host and op.label_strings() is None) or any(n in tainted for n in reads):
                tainted.update(o for o in op.node.output if o)
                rest.append(op)
            else:
                prefix_ops.append(op)
        if not prefix_ops or not rest:  # (nothing but classifiers naming labels: planned whole)
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
        if not op.takes([i.dtype if i is not None else None for i in ins]):
            raise Dynamic(f"{op.where}: its kernel does not take these inputs (strings): node by node")
        if any(o is not None and np.dtype(o.dtype).kind in "OUS" for o in outs):
            raise Dynamic(f"{op.where}: string outputs are made on the host, node by node")
        launch = op.launch(ins, outs)
        sources = {}
        for k, i in enumerate(ins):
            if i is not None and i.strings is not None and i.strings[0] != op.node.input[k]:
                # strings moved ahead (walk.py): read from the string input they came from
                source, numbers = i.strings
                if k != 0 or len(op.node.input) != 1:
                    raise Dynamic(f"{op.where}: strings moved into input {k}: node by node")
                sources[k] = source
                launch.extra.append(numbers)  # (kernels/ml_string.h: element i is element numbers[i] of X)
        if sources:
            return NativeStep(op, ins, outs, launch, kernel_index(op, launch, ins), sources)
        if computes_halves_in_float(op, launch, ins):
            raise Dynamic(f"{op.where}: float16 through a float32 kernel runs node by node")
        if op.moves and any(ins[k] is not None and np.dtype(ins[k].dtype).kind in "OUS"
                            for k in op.moved_inputs(len(ins))):
            raise Dynamic(f"{op.where}: strings move as element numbers, node by node")
        return NativeStep(op, ins, outs, launch, kernel_index(op, launch, ins))

    def _make_plan(self, feeds, by_value=frozenset()):
        if by_value and not self._values_plannable(feeds, by_value):
            by_value = frozenset()  # (a plan by shapes alone is right for any content)
        infos = known_infos(self.graph.initializers, {n: feeds[n] for n in self.input_names if n in feeds}, by_value)
        try:
            steps = self._walk(self.ops, infos)
        except Dynamic:
            return _DYNAMIC
        if any(infos[n].strings is not None and n not in feeds for n in self.output_names if n in infos):
            return _DYNAMIC  # (strings moved by the plan's walk, as outputs: node by node)
        used = {n for s in steps for n in s.op.node.input} | set(self.output_names)
        constants = {k: i.value for k, i in infos.items()
                     if k in used and i.value is not None and k not in feeds}
        input_names = [n for n in self.input_names if n in feeds]
        outputs_from_steps = {n for s in steps for n in s.op.node.output}
        out_names = [n for n in self.output_names if n in outputs_from_steps]
        labels = self._labels(steps)
        if labels is None:
            return _DYNAMIC
        try:
            plan = NativePlan(input_names, constants, out_names, infos, steps, self.pool, labels)
        except Dynamic:
            return _DYNAMIC
        plan.fixed_outputs = {n: infos[n].value for n in self.output_names if n not in outputs_from_steps}
        return plan

    def _labels(self, steps) -> dict | None:
        """{graph output: its string labels} of the steps that write class indexes for
        strings (Op.label_strings), and of the data movement that passes them on (the
        Identity exporters add before an output), named after the run; None where such
        indexes are read as numbers (the graph then runs node by node)."""
        labels: dict = {}  # value -> the strings its indexes name
        for step in steps:
            op, node = step.op, step.op.node
            strs = op.label_strings() if op.host else None
            if strs is not None:
                if node.output and node.output[0]:
                    labels[node.output[0]] = strs
                continue
            read = [n for n in node.input if n in labels]
            if not read:
                continue
            moved = {node.input[k] for k in op.moved_inputs(len(node.input))}
            tables = {id(labels[n]) for n in read}
            if not op.moves or any(n not in moved for n in read) or len(tables) != 1 or \
                    any(n and n not in labels for n in moved):
                return None
            labels.update((o, labels[read[0]]) for o in node.output if o)
        return {n: strs for n, strs in labels.items() if n in self.output_names}

    def _walk(self, ops, infos, taken=None) -> list:
        """The walk (walk.py) of `ops`, where each If whose condition is known at planning
        time (a constant, or computed from values planned by content) is walked as its
        chosen branch's nodes, so the branch runs inside this plan.  Any other host
        operator, or an If decided only at run time: Dynamic.  `taken`: the names of
        the plan's values so far, which a branch walked into it must not name again."""
        if not self._has_host_ops:
            return walk(ops, infos, self._record, self.pool)
        if taken is None:
            taken = set(infos) | {o for op in ops for o in op.node.output if o}
        steps, start = [], 0
        for k, op in enumerate(ops):
            if op.host and op.label_strings() is None:
                steps += walk(ops[start:k], infos, self._record, self.pool)
                steps += self._walk_branch(op, infos, taken)
                start = k + 1
        return steps + walk(ops[start:], infos, self._record, self.pool)

    def _walk_branch(self, op, infos, taken) -> list:
        node = op.node
        cond = infos.get(node.input[0]) if isinstance(op, If) and node.input and node.input[0] else None
        if cond is None or cond.value is None or cond.value.size != 1:
            raise Dynamic(f"{op.where} runs on the host: what it does is known only at run time")
        body = op.a.then_branch if bool(cond.value.reshape(-1)[0]) else op.a.else_branch
        sub = self.subprogram(body)
        if len(sub.output_names) != len(node.output) or any(n not in infos for n in sub.graph.outer):
            raise Dynamic(f"{op.where}: run on the host, which says what is wrong")
        made = set(sub.graph.initializers) | {o for n in sub.graph.nodes for o in n.output if o}
        if made & taken:  # a branch's own value named as one of the plan's: walked under another name
            sub = self._renamed_subprogram(body, made & taken, f"@{op.name}")
            made = set(sub.graph.initializers) | {o for n in sub.graph.nodes for o in n.output if o}
            if made & taken:  # (one name for two values in one plan: their bytes would be one)
                raise Dynamic(f"{op.where}: its branch names a value as the enclosing graph does")
        taken |= made
        infos.update((n, Info.of(v)) for n, v in sub.graph.initializers.items())
        steps = sub._walk(sub.ops, infos, taken)
        passes = [make_op(helper.make_node("Identity", [src], [dst], name=f"{op.name}/{dst}"), self.graph)
                  for src, dst in zip(sub.output_names, node.output) if dst]  # the If's outputs
        return steps + walk(passes, infos, self._record, self.pool)

    def _plan_for(self, feeds):
        return self._planned(feeds)[0]

    def _planned(self, feeds):
        """(the plan for these feeds or _DYNAMIC, the names whose content its signature holds)"""
        if not self._plannable:
            return _DYNAMIC, frozenset()
        by_value = self._by_value
        key = signature(feeds, self.input_names, by_value)
        if key is None:
            return _DYNAMIC, by_value
        return self.plans.get(key, self._make_plan, feeds, by_value), by_value

    def _values_plannable(self, feeds, by_value) -> bool:
        """Whether a plan for these contents of the `by_value` values is worth making: they
        are small integer or bool tensors, and not yet MAX_VALUE_PLANS different ones
        (contents that change from run to run, such as an enclosing Loop's counter, run
        as if no content were known: node by node where shapes need it).  When they are
        not, the partition stops planning by content."""
        values = []
        for name in sorted(by_value):
            v = feeds.get(name)
            if v is None:
                continue
            if type(v) is not np.ndarray or v.dtype.kind not in "iub" or v.size > MAX_VALUE_ELEMENTS:
                self._by_value = frozenset()
                return False
            values.append((name, v.dtype.str, v.shape, v.tobytes()))
        values = tuple(values)
        with self._lock:
            if values in self._value_keys:
                return True
            if len(self._value_keys) >= MAX_VALUE_PLANS:
                self._by_value = frozenset()
                return False
            self._value_keys.add(values)
        return True

    # -- running ---------------------------------------------------------------------------
    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        plan = self._plan_for(feeds)
        if plan is _DYNAMIC:
            return self._run_eager(feeds)
        try:
            results = plan.run(feeds)
        except Dynamic:  # strings that the plan's kernels cannot be given exactly
            return self._run_eager(feeds)
        if plan.fixed_outputs:
            for name, value in plan.fixed_outputs.items():
                results[name] = np.array(feeds[name] if value is None else value, copy=True)
        return results

    def quick_run(self, feeds: dict, output_names):
        """The plan's QuickRun (native.py) for these feeds, or None where they run another way."""
        plan, by_value = self._planned(feeds)
        if plan is _DYNAMIC or plan.fixed_outputs:
            return None
        contents = {n: feeds[n] for n in by_value if n in feeds}  # (a QuickRun checks them: the plan holds them)
        return plan.quick_run(feeds, output_names, contents)

    def run_kept(self, feeds: dict) -> dict:
        """run(), through a QuickRun (native.py) kept for each of the last signatures fed
        where there is one: the prefix before host operators and the bodies they run go
        this way, once or more per run of the enclosing graph."""
        plain = terminate.current() is None and profile.active() is None and memory.idle()
        if plain and self._quick_runs:
            for quick in self._quick_runs:
                outs = quick.run(feeds)
                if outs is not None:
                    return dict(zip(self.output_names, outs))
        results = self.run(feeds)
        if plain and self._quick_misses < _QUICK_TRIES:
            quick = self.quick_run(feeds, self.output_names)
            if quick is None:
                self._quick_misses += 1
            else:
                self._quick_runs = (quick,) + self._quick_runs[:_QUICK_KEPT - 1]
        return results

    def _run_eager(self, feeds):
        values = dict(self.graph.initializers)
        values.update(feeds)
        prefix = self._prefix
        if prefix is not None and all(isinstance(feeds[n], np.ndarray) for n in prefix.input_names if n in feeds):
            values.update(prefix.run_kept({n: feeds[n] for n in prefix.input_names if n in feeds}))
            steps = self._steps_rest
        else:
            steps = self._steps_all
        profiler = profile.active()
        flag = terminate.current()
        for op, inputs, outputs in steps:
            if flag is not None and flag[0]:
                terminate.check()
            arrays = [values[n] if n else None for n in inputs]
            start = time.monotonic_ns() if profiler is not None else 0
            if op.host or (type(op).run_host is not Op.run_host and _needs_host(op, arrays)):
                outs = op.run_host(arrays, _HostRuntime(self, values))
            else:
                outs = run_eager(op, arrays, self.pool)
            if profiler is not None:
                profiler.node(op.node.name, op.op_type, start, time.monotonic_ns(), arrays, outs)
            for name, v in zip(outputs, outs):
                if name:
                    values[name] = v
        fed = {id(v) for v in feeds.values()}
        return {n: (_copy_value(values[n]) if id(values[n]) in fed else values[n]) for n in self.output_names}

    # -- subgraphs (bodies of If / Loop / Scan) ----------------------------------------------
    def subprogram(self, body) -> "CPUPartition":
        key = id(body)
        sub = self._subprograms.get(key)  # (a dict read is atomic: only changes take the lock)
        if sub is None:
            visible = tuple(self._visible_names())
            sub = CPUPartition(graph_mod.from_graph_proto(body, self.graph.opsets, visible), self.pool)
            with self._lock:
                self._subprograms[key] = sub
        return sub

    def _renamed_subprogram(self, body, names, tag: str) -> "CPUPartition":
        """subprogram() of a copy of `body` whose own values in `names` are named with
        `tag` after them (made once, kept with the copy)."""
        key = (id(body), frozenset(names), tag)
        kept = self._renamed.get(key)
        if kept is None:
            copy = onnx.GraphProto()
            copy.CopyFrom(body)
            _rename(copy, {n: n + tag for n in names})
            with self._lock:
                kept = self._renamed.setdefault(key, (copy, body))  # (body: alive while its id is a key)
        return self.subprogram(kept[0])

    def _visible_names(self):
        names = set(self.input_names) | set(self.graph.initializers) | set(self.graph.outer)
        names |= {o for n in self.graph.nodes for o in n.output if o}
        return names


_QUICK_KEPT = 4  # QuickRuns kept per partition (run_kept)
_QUICK_TRIES = 8  # signatures without one before a partition stops asking
MAX_VALUE_PLANS = 8  # different contents of the values a partition plans by content
MAX_VALUE_ELEMENTS = 64  # the largest of them: shapes, sizes, axes


def read_as_values(ops, conditions_only: bool = False) -> set[str]:
    """Names whose content planning needs: the value inputs of the ops (a shape, pads,
    axes, a size, an If's condition; with `conditions_only`, only If conditions) and
    every value they are computed from, except through Shape and Size, which read only
    their input's shape."""
    needed: set[str] = set()
    for op in reversed(ops):
        node = op.node
        if isinstance(op, (Shape, Size)):
            continue
        if not op.host and any(o in needed for o in node.output if o):
            needed.update(n for n in node.input if n)
        elif not conditions_only or isinstance(op, If):
            needed.update(node.input[i] for i in op.value_inputs if i < len(node.input) and node.input[i])
    return needed


def _rename(g, mapping: dict) -> None:
    """Rename values of graph `g` in place by `mapping`: where it makes them, reads them
    and gives them out, and where the bodies nested in it read them (unless they make
    a value of that name themselves)."""
    for t in g.initializer:
        t.name = mapping.get(t.name, t.name)
    for v in list(g.output) + list(g.value_info):
        v.name = mapping.get(v.name, v.name)
    for node in g.node:
        node.input[:] = [mapping.get(n, n) for n in node.input]
        node.output[:] = [mapping.get(n, n) for n in node.output]
        for sub in graph_mod.subgraphs(node):
            own = {v.name for v in sub.input} | {t.name for t in sub.initializer} | {o for n in sub.node for o in n.output}
            inner = {k: v for k, v in mapping.items() if k not in own}
            if inner:
                _rename(sub, inner)


def _needs_host(op: Op, arrays) -> bool:
    """A value a C kernel cannot take: a sequence, an empty optional, a string array
    (unless the op's kernel takes strings: Op.takes)."""
    for name, a in zip(op.node.input, arrays):
        if a is None and name:
            return True
        if a is not None and not isinstance(a, np.ndarray):
            return True
    return not op.takes([a.dtype if a is not None else None for a in arrays])


def _copy_value(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, list):
        return [_copy_value(x) for x in v]
    return v


class _HostRuntime(Runtime):
    """What a host operator may use: the values in scope and subgraph execution."""

    def __init__(self, program: CPUPartition, values: dict):
        self.program = program
        self.values = values
        self.pool = program.pool

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
        results = sub.run_kept(feeds)
        return [results[n] for n in sub.output_names]
