"""The CPU's plan: every step of a partition, for one input signature, run in one C
call (`mlrt_plan_run`).

Steps come from the walk (walk.py) with shapes resolved, intermediate values are laid
out in one arena by lifetime (memory.py), and constants and the partition's inputs
and outputs are external pointers bound at each run.  A string input (read only by
kernels that take strings: Op.takes) is bound as an mlrt_strings over its UTF-32 copy
(_lib.utf32); string class labels are written as indexes and named after the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import _lib, profile, terminate
from ..._errors import ResourceExhausted
from ..ops import AliasKind, Info, Op
from .memory import ALIGN, allocate, arena_layout, check_size, lifetimes, root
from .walk import Dynamic


@dataclass
class NativeStep:
    """One node as the CPU records it: its operator, resolved input and output infos,
    the op's Launch (parameters, views, extra constant inputs) and the C kernel;
    `sources`: {input index: the string input it reads instead (its elements picked by
    numbers among the Launch's extra inputs)}."""

    op: Op
    inputs: list
    outputs: list
    launch: object
    kernel: int
    sources: dict = field(default_factory=dict)


class NativePlan:
    """A native plan for one input signature, plus what run() needs to bind it."""

    def __init__(self, input_names, constants, output_names, infos, steps, pool, labels=None):
        """`labels`: {output: the strings its int64 indexes name}.  Raises Dynamic for a
        string constant that a kernel cannot be given exactly."""
        ffi, lib = _lib.ffi(), _lib.lib()
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.strings = [k for k, n in enumerate(self.input_names) if infos[n].dtype.kind in "OUS"]
        self.labels = {}
        for name, strs in (labels or {}).items():
            table = np.empty(len(strs), dtype=object)
            table[:] = list(strs)
            self.labels[name] = table
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
        for name, base in self.output_bases.items():  # sizes fixed by the signature: checked once here
            info = self.output_infos[name]
            check_size(info.size * info.dtype.itemsize, f"output '{name}': a {list(info.shape)} {info.dtype.name} tensor")
        self._outputs = [(name, tuple(self.output_infos[name].shape), self.output_infos[name].dtype)
                         for name in self.output_bases]  # the last externals, in this order
        self.n_external = n_fixed + len(self.output_bases)
        spans = lifetimes([s.op.node.input for s in steps], [s.op.node.output for s in steps])
        within = _shared_bytes(steps, external, infos)
        for name in within:  # a value kept in another's bytes keeps them alive while it is
            holder, _ = root(within, name)
            if holder in spans:
                first, last = spans[holder]
                spans[holder] = (min(first, spans[name][0]), max(last, spans[name][1]))
        sizes = {name: infos[name].size * infos[name].dtype.itemsize
                 for s in steps for name in s.op.node.output if name and name not in external and name not in within}
        offsets, arena = arena_layout(spans, sizes)
        check_size(arena, "the plan's arena")

        def slot_of(name):
            holder, at = root(within, name)
            return (external[holder], at) if holder in external else (0, offsets.get(holder, 0) + at)

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
                if i in step.sources:  # strings moved ahead: read from the input they came from
                    name = step.sources[i]
                    info = infos[name]
                _describe(ins, in_slots, i, info, step.launch.views.get(i), slot_of(name))
            for j, name in enumerate(extras):
                _describe(ins, in_slots, len(step.inputs) + j, Info.of(constants[name]), None, (external[name], 0))
            for i, info in enumerate(step.outputs):
                name = node.output[i] if i < len(node.output) else ""
                if not name:
                    info = None
                _describe(outs, out_slots, i, info, None, slot_of(name))
            params, pptr, psize = _lib.pack_params(step.op.params, step.launch.params)
            cname = ffi.new("char[]", step.op.name.encode())
            keep += [ins, in_slots, outs, out_slots, params, cname]
            r.kernel, r.n_inputs, r.n_outputs = step.kernel, n_in, len(step.outputs)
            r.inputs, r.input_slots, r.outputs, r.output_slots = ins, in_slots, outs, out_slots
            r.params, r.params_size, r.name = pptr, psize, cname
        plan = lib.mlrt_plan_create(records, len(steps), self.n_external, arena)
        if plan == ffi.NULL:
            _lib.raise_status(lib.MLRT_ERR_INTERNAL, "plan")
        self.handle = ffi.gc(plan, lib.mlrt_plan_destroy)
        self.steps = list(steps)
        self.shared = {name: root(within, name) for name in within}  # name -> (value holding it, byte offset)
        self.arena_bytes = arena
        self.pool = pool
        self._arenas: list = []  # idle arenas
        self._arena_pointers: dict = {}  # id(arena) -> its cffi pointer, made once
        self._const_ptrs, self._const_kept = [], []
        for c in self.constants:
            if c.dtype.kind in "OUS":
                u = _lib.utf32(c)
                if u is None:
                    raise Dynamic("a string constant that its kernel cannot be given exactly")
                head, kept = _lib.strings_header(u)
                self._const_kept.append(kept)
                self._const_ptrs.append(head)
            else:
                self._const_ptrs.append(_lib.array_pointer(c))
        self._ffi, self._run_plan = ffi, lib.mlrt_plan_run  # what run() calls, looked up once
        # the run that reads a terminate flag between nodes (None: an older runtime without it)
        self._run_flagged = lib.mlrt_plan_run_flagged if hasattr(lib, "mlrt_plan_run_flagged") else None
        self._pointers = ffi.typeof("void *[]")

    def bind(self, feeds: dict[str, np.ndarray]):
        """(external pointer array, new output arrays by name, arrays the pointers need kept
        alive): what one run of the plan reads and writes, in the plan's external order."""
        from_buffer = self._ffi.from_buffer
        pointers, keep = [], []
        for name in self.input_names:
            a = feeds[name]
            if a.dtype.kind in "OUS":
                u = _lib.utf32(a)
                if u is None:
                    raise Dynamic(f"input '{name}': strings the kernels cannot be given exactly")
                head, kept = _lib.strings_header(u)
                keep += [head, kept]
                pointers.append(head)
                continue
            if type(a) is not np.ndarray or not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
                keep.append(a)
            pointers.append(from_buffer(a))
        pointers += self._const_ptrs
        results = {}
        for name, shape, dtype in self._outputs:
            try:
                out = np.empty(shape, dtype)
            except MemoryError as exc:
                raise ResourceExhausted(f"output '{name}': cannot allocate a {list(shape)} {dtype.name} tensor "
                                        f"({exc})") from None
            results[name] = out
            pointers.append(from_buffer(out))
        return self._ffi.new(self._pointers, pointers or 1), results, keep

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        ffi = self._ffi
        flag = terminate.current()
        if flag is not None:
            if flag[0]:
                terminate.check()
            if self._run_flagged is None:
                flag = None  # an older runtime: the flag is read only between plans
        ext, results, keep = self.bind(feeds)
        profiler = profile.active()
        if profiler is None:  # the common case, kept quick
            arena = self._take_arena()
            arena_ptr = ffi.NULL if arena is None else self._arena_pointers[id(arena)]
            try:
                if flag is None:
                    status = self._run_plan(self.handle, self.pool.handle, ext, arena_ptr)
                else:
                    status = self._run_flagged(self.handle, self.pool.handle, ext, arena_ptr, ffi.NULL, flag)
            finally:
                if arena is not None:
                    self._arenas.append(arena)
            if status:
                _lib.raise_status(status)
            return self._named(results) if self.labels else results
        arena = self._take_arena()
        arena_ptr = ffi.from_buffer(arena) if arena is not None else ffi.NULL
        try:
            times = np.zeros(2 * len(self.steps), np.int64)  # per node: start, end (ns)
            times_ptr = ffi.cast("int64_t *", times.ctypes.data)
            lib = _lib.lib()
            paths = None
            if hasattr(lib, "mlrt_plan_run_profiled"):  # each node's kernel path too
                paths = ffi.new("const char *[]", max(len(self.steps), 1))
                status = lib.mlrt_plan_run_profiled(self.handle, self.pool.handle, ext, arena_ptr, times_ptr, paths,
                                                    ffi.NULL if flag is None else flag)
            elif flag is None:
                status = lib.mlrt_plan_run_timed(self.handle, self.pool.handle, ext, arena_ptr, times_ptr)
            else:
                status = self._run_flagged(self.handle, self.pool.handle, ext, arena_ptr, times_ptr, flag)
            for k, (step, (t0, t1)) in enumerate(zip(self.steps, times.reshape(-1, 2).tolist())):
                if t1:
                    path = ffi.string(paths[k]).decode() if paths is not None and paths[k] != ffi.NULL else None
                    profiler.node(step.op.node.name, step.op.op_type, t0, t1, step.inputs, step.outputs,
                                  kernel_path=path)
        finally:
            self._give_back_arena(arena)
        _lib.raise_status(status)
        return self._named(results) if self.labels else results

    def _named(self, results: dict) -> dict:
        """The class labels of `labels`, named: their indexes made strings."""
        for name, table in self.labels.items():
            if name in results:
                results[name] = table[results[name]]
        return results

    def _take_arena(self):
        """A 64-byte-aligned arena, reused across runs (one per concurrent run), so large
        intermediate buffers are not page-faulted in afresh every time.  (list.pop and
        append are atomic: no lock.)"""
        if not self.arena_bytes:
            return None
        try:
            return self._arenas.pop()
        except IndexError:
            pass
        raw = allocate((self.arena_bytes + 64,), np.uint8, "arena")
        start = (-raw.ctypes.data) % 64
        arena = raw[start:start + self.arena_bytes]
        self._arena_pointers[id(arena)] = self._ffi.from_buffer(arena)  # (kept while the arena is)
        return arena

    def _give_back_arena(self, arena) -> None:
        if arena is not None:
            self._arenas.append(arena)

    def quick_run(self, feeds: dict, output_names, contents=None) -> "QuickRun | None":
        """A QuickRun of this plan for feeds of exactly these names, dtypes and shapes (and
        the content of the arrays in `contents`, {name: array}, for a plan made for
        theirs), giving `output_names`; None where the plan does not write every one of them."""
        written = {name for name, _, _ in self._outputs}
        if set(feeds) != set(self.input_names) or not all(n in written for n in output_names):
            return None
        if any(type(feeds[n]) is not np.ndarray for n in self.input_names):
            return None
        return QuickRun(self, [(n, None if k in self.strings else feeds[n].dtype, feeds[n].shape)
                               for k, n in enumerate(self.input_names)], output_names,
                        {n: v.tobytes() for n, v in (contents or {}).items()})


class QuickRun:
    """A plan's run for the feeds of one signature, with the least Python around the C
    call (a model of a few microseconds spends most of them here): no dicts between
    layers, the external-pointer array kept from run to run (one per concurrent run,
    list pop/append) with the constants' pointers written once, outputs allocated to
    the sizes the plan checked.  run() does nothing and answers None where the feeds
    are not exactly those: other names, or an array of another type, shape or layout.
    A string input (dtype None here) takes any string array of its shape, bound as the
    plan binds it, through an mlrt_strings kept with the pointer array."""

    def __init__(self, plan: NativePlan, signature: list, output_names, contents=None):
        self.plan = plan
        self._inputs = signature  # (name, dtype or None for strings, shape), in the plan's external order
        self._contents = list((contents or {}).items())  # (name, bytes): inputs the plan was made for the content of
        self._outputs = [(shape, dtype) for _, shape, dtype in plan._outputs]
        order = {name: k for k, (name, _, _) in enumerate(plan._outputs)}
        self._order = [order[n] for n in output_names]
        # (position among the plan's outputs, the strings its indexes name)
        self._labels = [(order[n], t) for n, t in plan.labels.items() if n in order]
        if self._order == list(range(len(self._outputs))):
            self._order = None  # the plan's own order
        self._first_output = len(plan.input_names) + len(plan.constants)
        self._free: list = []  # idle (pointer array, its string inputs' mlrt_strings)
        self._from_buffer, self._null = plan._ffi.from_buffer, plan._ffi.NULL
        self._run_plan, self._handle, self._pool = plan._run_plan, plan.handle, plan.pool
        self._arena_bytes = plan.arena_bytes

    def fits(self, feeds: dict) -> bool:
        """Whether these feeds have this run's names, dtypes and shapes (whatever their layout)."""
        if len(feeds) != len(self._inputs):
            return False
        for name, dtype, shape in self._inputs:
            a = feeds.get(name)
            if type(a) is not np.ndarray or a.shape != shape or (
                    a.dtype != dtype if dtype is not None else a.dtype.kind not in "OUS"):
                return False
        return all(feeds[name].tobytes() == b for name, b in self._contents)

    def _pointers(self):
        ffi = self.plan._ffi
        ext = ffi.new(self.plan._pointers, max(self.plan.n_external, 1))
        for i, p in enumerate(self.plan._const_ptrs, len(self.plan.input_names)):
            ext[i] = p
        heads = {}
        for i, (_, dtype, _) in enumerate(self._inputs):
            if dtype is None:
                ext[i] = heads[i] = ffi.new("mlrt_strings *")
        return ext, heads

    def run(self, feeds: dict) -> list | None:
        if len(feeds) != len(self._inputs):
            return None
        from_buffer, free = self._from_buffer, self._free
        try:
            ext, heads = free.pop()  # (atomic: another thread may take the last one between a test and a pop)
        except IndexError:
            ext, heads = self._pointers()
        kept = []
        try:
            i = 0
            for name, dtype, shape in self._inputs:
                a = feeds.get(name)
                if dtype is None:  # a string input: its mlrt_strings rewritten
                    if type(a) is not np.ndarray or a.dtype.kind not in "OUS" or a.shape != shape:
                        return None
                    made = _utf32(a)
                    if made is None:
                        return None  # (the full path runs it node by node)
                    chars = from_buffer("uint32_t[]", made[1])
                    head = heads[i]
                    head.width, head.chars = made[0], chars
                    kept.append((chars, made))
                    i += 1
                    continue
                if type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape or not a.flags.c_contiguous:
                    return None
                ext[i] = from_buffer(a)
                i += 1
            for name, b in self._contents:
                if feeds[name].tobytes() != b:
                    return None
            i = self._first_output
            outs = []
            for shape, dtype in self._outputs:
                try:
                    out = _empty(shape, dtype)
                except MemoryError:
                    return None  # (the full path says which output)
                outs.append(out)
                ext[i] = from_buffer(out)
                i += 1
            if self._arena_bytes:
                plan = self.plan
                arena = plan._take_arena()
                try:
                    status = self._run_plan(self._handle, self._pool.handle, ext, plan._arena_pointers[id(arena)])
                finally:
                    plan._arenas.append(arena)
            else:
                status = self._run_plan(self._handle, self._pool.handle, ext, self._null)
        finally:
            free.append((ext, heads))
            del kept
        if status:
            _lib.raise_status(status)
        for k, table in self._labels:
            outs[k] = table[outs[k]]
        return outs if self._order is None else [outs[k] for k in self._order]


_empty = np.empty
_utf32 = _lib.utf32


def _shared_bytes(steps, external, infos) -> dict[str, tuple[str, int]]:
    """Values that need no bytes of their own: {name: (the value whose bytes hold it, at
    which byte offset)}, from what each operator declares (Op.aliases, ops/_base.py).
    A GATHER (Concat) along an axis with only 1s before it is its inputs laid end to
    end, so the steps that make them write straight into its slices; SLICES (Split)
    outputs are slices of its input; a WHOLE output (Reshape, Flatten, Squeeze,
    Unsqueeze, Identity, Dropout without its mask) is its input, where the kernel reads
    that as it is.  Their kernels then find the bytes already in place and move nothing.
    Never a value bound outside the plan (its inputs, constants and outputs have buffers
    of their own), never a value in two places; slices start on 64-byte boundaries, as
    the arena's values do."""
    written = {n for s in steps for n in s.op.node.output if n}
    within: dict[str, tuple[str, int]] = {}

    def free(name):
        return name and name in written and name not in external and name not in within

    def slices(names, whole: Info, axis: int):
        if any(d != 1 for d in whole.shape[:axis]):
            return None
        at, out = 0, []
        for name in names:
            out.append(at)
            at += infos[name].size * infos[name].dtype.itemsize
        return out if all(o % ALIGN == 0 for o in out) else None

    for step in steps:
        op, node = step.op, step.op.node
        for alias in op.node_aliases():
            j, i = alias.output, alias.input
            if alias.kind is AliasKind.GATHER and j < len(node.output) and node.output[j]:
                # (its output may be the plan's: the pieces are then written there)
                names = list(node.input)
                if len(set(names)) == len(names) and all(free(n) for n in names):
                    whole = step.outputs[j]
                    at = slices(names, whole, op.alias_axis(whole.rank))
                    if at is not None:
                        within.update((n, (node.output[j], o)) for n, o in zip(names, at))
            elif alias.kind is AliasKind.SLICES and i < len(node.input) and node.input[i]:
                names = [n for n in node.output if n]
                if len(names) == len(node.output) and all(free(n) for n in names):
                    whole = step.inputs[i]
                    at = slices(names, whole, op.alias_axis(whole.rank))
                    if at is not None:
                        within.update((n, (node.input[i], o)) for n, o in zip(names, at))
            elif alias.kind is AliasKind.WHOLE and j < len(node.output) and free(node.output[j]) \
                    and i < len(node.input) and node.input[i] and i not in step.launch.views:
                within[node.output[j]] = (node.input[i], 0)
    return within


def _describe(descs, slots, i, info: Info | None, view, slot) -> None:
    if info is None:
        descs[i].dtype = 0
        descs[i].rank = 0
        slots[i].base, slots[i].offset = -1, 0
        return
    shape, strides = (view.shape, view.strides) if view is not None else (info.shape, None)
    _lib.fill_tensor(descs[i], _lib.STRING if info.dtype.kind in "OUS" else info.dtype, shape, strides)
    slots[i].base, slots[i].offset = slot
