"""Loop and Scan bodies iterated in C: a body whose plan is native runs its iterations
in `mlrt_plan_run_loop` (include/mlrt.h), one C call for many iterations, instead of
one Python round trip each.

The body's plan is the one its CPUPartition makes for the first iteration's inputs;
it applies when every later iteration has the same signature (loop-carried outputs
of the shapes and types of their inputs) and every body output is a distinct value
the plan writes (not a constant or an input passed through).  Otherwise, or while
profiling, the caller iterates in Python.  Scan inputs are read from axis-0 stacks of
their slices; scan outputs are written straight into buffers of `chunk` iterations
each (for a Loop without a known length the chunks double while it goes on).
"""

from __future__ import annotations

import numpy as np

from .. import _lib, profile, terminate
from .memory import allocate
from .walk import Dynamic

_FIRST_CHUNK = 16
_MAX_CHUNK = 4096


def run_native(sub, feeds: dict, state: list, first_index: int, trip: int | None):
    """A Loop: iterate the body (iteration number, condition, state...) -> (condition,
    state..., scan outputs...) in C from iteration `first_index` while its condition
    holds and `trip` (None: no limit) allows.  `feeds` holds what the body reads from
    enclosing graphs.  Returns (state, scan chunks, iterations, still going) or None."""
    names_in, names_out = [v.name for v in sub.graph.inputs], list(sub.output_names)
    n = len(state)
    return _iterate(sub, feeds, names_in[2:], names_out[1:1 + n], state, [], [], names_out[1 + n:],
                    names_in[0], names_in[1], names_out[0], first_index, trip)


def run_native_scan(sub, feeds: dict, state: list, slices: list, length: int):
    """A Scan: iterate the body (state..., slices...) -> (state..., scan outputs...) over
    `length` steps; slices[j] holds scan input j's slices stacked on axis 0, in the order
    they are read.  Returns (state, scan outputs stacked on axis 0) or None."""
    names_in, names_out = [v.name for v in sub.graph.inputs], list(sub.output_names)
    n = len(state)
    if length <= 0:
        return None
    done = _iterate(sub, feeds, names_in[:n], names_out[:n], state, names_in[n:], slices, names_out[n:],
                    None, None, None, 0, length)
    if done is None:
        return None
    final, chunks, _, _ = done
    return final, [np.concatenate(c) for c in chunks]


def _iterate(sub, feeds, carried_in, carried_out, state, scan_in, slices, scan_out, index_in, cond_in, cond_out,
             first_index, trip):
    if profile.active() is not None or (trip is not None and trip <= first_index):
        return None
    lib, ffi = _lib.lib(), _lib.ffi()
    if not hasattr(lib, "mlrt_plan_run_loop"):  # an older runtime, without it
        return None
    outputs_named = [n for n in (cond_out, *carried_out, *scan_out) if n]
    if len(set(outputs_named)) != len(outputs_named):
        return None  # a value returned twice (carried and scanned): its slot cannot hold both
    if any(not isinstance(v, np.ndarray) or not v.size or v.dtype.kind in "OUS" for v in list(state) + list(slices)):
        return None  # (empty values: the final ones are told apart by address below; strings: bound per run)
    carried = [np.array(v, copy=True, order="C") for v in state]  # buffers of our own: the loop writes them
    slices = [np.ascontiguousarray(s) for s in slices]
    plan_feeds = dict(feeds)
    plan_feeds.update(zip(carried_in, carried))
    plan_feeds.update((name, s[0]) for name, s in zip(scan_in, slices))
    if index_in:
        plan_feeds[index_in] = np.array(first_index, np.int64)
    if cond_in:
        plan_feeds[cond_in] = np.array(True)
    plan = sub._plan_for(plan_feeds)
    if (not hasattr(plan, "output_bases") or plan.fixed_outputs or plan.labels
            or any(n not in plan.output_bases for n in outputs_named)):
        return None  # (labels: named after a run of the plan's own)
    infos = plan.output_infos
    for name, v in zip(carried_out, carried):
        if tuple(infos[name].shape) != v.shape or infos[name].dtype != v.dtype:
            return None  # a loop-carried value changes shape or type: Python iterates
    if cond_out and (infos[cond_out].dtype != np.bool_ or infos[cond_out].size != 1):
        return None
    slot_in = {n: i for i, n in enumerate(plan.input_names)}
    slot_out = {n: b - 1 for n, b in plan.output_bases.items()}

    try:
        ext, outputs, keep = plan.bind(plan_feeds)  # (keep: alive while ext points at them)
    except Dynamic:
        return None  # (strings the kernels cannot be given exactly)
    loop = ffi.new("mlrt_loop *")
    loop.index_input = slot_in[index_in] if index_in else -1
    loop.cond_input = slot_in[cond_in] if cond_in else -1
    loop.cond_output = slot_out[cond_out] if cond_out else -1
    tables = [ffi.new("int32_t[]", [slot_in[n] for n in carried_in] or [0]),
              ffi.new("int32_t[]", [slot_out[n] for n in carried_out] or [0]),
              ffi.new("int32_t[]", [slot_in[n] for n in scan_in] or [0]),
              ffi.new("size_t[]", [s[0].nbytes for s in slices] or [0]),
              ffi.new("void *[]", [ffi.from_buffer(s) for s in slices] or 1),
              ffi.new("int32_t[]", [slot_out[n] for n in scan_out] or [0]),
              ffi.new("size_t[]", [infos[n].size * infos[n].dtype.itemsize for n in scan_out] or [0])]
    loop.n_carried, loop.carried_inputs, loop.carried_outputs = len(carried), tables[0], tables[1]
    loop.n_scan_inputs, loop.scan_inputs, loop.scan_input_bytes, loop.scan_inputs_at = len(slices), *tables[2:5]
    loop.n_scan, loop.scan_outputs, loop.scan_bytes = len(scan_out), tables[5], tables[6]
    flag = terminate.current()
    if flag is not None and "terminate" in _loop_fields(ffi):  # (an older runtime's mlrt_loop has no such field)
        loop.terminate = flag

    arena = plan._take_arena()
    arena_ptr = ffi.from_buffer(arena) if arena is not None else ffi.NULL
    chunks: list[list[np.ndarray]] = [[] for _ in scan_out]
    i, going = first_index, True
    chunk = _FIRST_CHUNK if cond_out or trip is None else trip - first_index
    try:
        while going and (trip is None or i < trip):
            terminate.check()  # (between chunks too: an older runtime does not read the flag)
            n = chunk if trip is None else min(chunk, trip - i)
            buffers = [allocate((n, *infos[s].shape), infos[s].dtype, f"scan output '{s}'") for s in scan_out]
            scan_ptrs = ffi.new("void *[]", [ffi.from_buffer(b) for b in buffers] or 1)
            at = ffi.new("void *[]", [ffi.from_buffer(s[i - first_index:]) for s in slices] or 1)
            loop.iterations, loop.first_index, loop.scan_buffers, loop.scan_inputs_at = n, i, scan_ptrs, at
            _lib.raise_status(lib.mlrt_plan_run_loop(plan.handle, plan.pool.handle, ext, arena_ptr, loop))
            for k, b in enumerate(buffers):
                chunks[k].append(b[:loop.done])
            i += loop.done
            going = not loop.stopped
            chunk = min(chunk * 2, _MAX_CHUNK)
    finally:
        plan._give_back_arena(arena)
    # the loop-carried values are wherever the last swap left them: the input slots
    by_address = {a.ctypes.data: a for a in carried}
    by_address.update((outputs[n].ctypes.data, outputs[n]) for n in carried_out)
    final = [by_address[int(ffi.cast("uintptr_t", ext[slot_in[n]]))] for n in carried_in]
    del keep, tables
    return final, chunks, i - first_index, going


def _loop_fields(ffi) -> set:
    fields = _LOOP_FIELDS.get(id(ffi))
    if fields is None:
        fields = _LOOP_FIELDS[id(ffi)] = {name for name, _ in ffi.typeof("mlrt_loop").fields}
    return fields


_LOOP_FIELDS: dict = {}
