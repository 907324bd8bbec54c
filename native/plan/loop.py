"""Loop bodies iterated in C: a body whose plan is native runs its iterations in
`mlrt_plan_run_loop` (include/mlrt.h), one C call for many iterations, instead of one
Python round trip each.

The body's plan is the one its CPUPartition makes for the first iteration's inputs;
it applies when every later iteration has the same signature (loop-carried outputs
of the shapes and types of their inputs) and every body output is a value the plan
writes (not a constant or an input passed through).  Otherwise, or while profiling,
the caller iterates in Python.  Scan outputs are written straight into buffers of
`chunk` iterations each, which double while the loop goes on.
"""

from __future__ import annotations

import numpy as np

from .. import _lib, profile
from .memory import allocate

_FIRST_CHUNK = 16
_MAX_CHUNK = 4096


def run_native(sub, feeds: dict, state: list, first_index: int, trip: int | None):
    """Iterate the body in C from iteration `first_index` with loop-carried `state`
    while its condition holds and `trip` (None: no limit) allows.  `feeds` holds the
    values the body reads from enclosing graphs.  Returns (state, scan_chunks,
    iterations, still_going) or None when the loop cannot run this way."""
    if profile.active() is not None or (trip is not None and trip <= first_index):
        return None
    lib, ffi = _lib.lib(), _lib.ffi()
    if not hasattr(lib, "mlrt_plan_run_loop"):  # an older runtime, without it
        return None
    names_in = [v.name for v in sub.graph.inputs]
    names_out = list(sub.output_names)
    n_state = len(state)
    if len(set(names_out)) != len(names_out) or any(not isinstance(v, np.ndarray) or not v.size for v in state):
        return None  # (empty values: the final ones are told apart by address below)
    index = np.array(first_index, np.int64)
    cond = np.array(True)
    carried = [np.array(v, copy=True, order="C") for v in state]  # buffers of our own: the loop writes them
    plan_feeds = dict(feeds)
    plan_feeds.update(zip(names_in, [index, cond, *carried]))
    plan = sub._plan_for(plan_feeds)
    if not hasattr(plan, "output_bases") or plan.fixed_outputs or any(n not in plan.output_bases for n in names_out):
        return None
    infos = plan.output_infos
    for name, v in zip(names_out[1:1 + n_state], carried):
        if tuple(infos[name].shape) != v.shape or infos[name].dtype != v.dtype:
            return None  # a loop-carried value changes shape or type: Python iterates
    if infos[names_out[0]].dtype != np.bool_ or infos[names_out[0]].size != 1:
        return None
    slot_in = {n: i for i, n in enumerate(plan.input_names)}
    slot_out = {n: b - 1 for n, b in plan.output_bases.items()}

    keep = [np.ascontiguousarray(plan_feeds[n]) for n in plan.input_names]  # alive while ext points at them
    pointers = [ffi.from_buffer(a) for a in keep] + plan._const_ptrs
    outputs = {}
    for name, shape, dtype in plan._outputs:
        outputs[name] = allocate(shape, dtype, f"loop body output '{name}'")
        pointers.append(ffi.from_buffer(outputs[name]))
    ext = ffi.new("void *[]", pointers or 1)
    scan_names = names_out[1 + n_state:]
    loop = ffi.new("mlrt_loop *")
    loop.index_input = slot_in[names_in[0]]
    loop.cond_input = slot_in[names_in[1]]
    loop.cond_output = slot_out[names_out[0]]
    carried_in = ffi.new("int32_t[]", [slot_in[n] for n in names_in[2:]] or [0])
    carried_out = ffi.new("int32_t[]", [slot_out[n] for n in names_out[1:1 + n_state]] or [0])
    loop.n_carried, loop.carried_inputs, loop.carried_outputs = n_state, carried_in, carried_out
    scan_slots = ffi.new("int32_t[]", [slot_out[n] for n in scan_names] or [0])
    scan_bytes = ffi.new("size_t[]", [infos[n].size * infos[n].dtype.itemsize for n in scan_names] or [0])
    loop.n_scan, loop.scan_outputs, loop.scan_bytes = len(scan_names), scan_slots, scan_bytes

    arena = plan._take_arena()
    arena_ptr = ffi.from_buffer(arena) if arena is not None else ffi.NULL
    chunks: list[list[np.ndarray]] = [[] for _ in scan_names]
    i, going, chunk = first_index, True, _FIRST_CHUNK
    try:
        while going and (trip is None or i < trip):
            n = chunk if trip is None else min(chunk, trip - i)
            buffers = [allocate((n, *infos[s].shape), infos[s].dtype, f"scan output '{s}'") for s in scan_names]
            scan_ptrs = ffi.new("void *[]", [ffi.from_buffer(b) for b in buffers] or 1)
            loop.iterations, loop.first_index, loop.scan_buffers = n, i, scan_ptrs
            _lib.raise_status(lib.mlrt_plan_run_loop(plan.handle, plan.pool.handle, ext, arena_ptr, loop))
            for k, b in enumerate(buffers):
                chunks[k].append(b[:loop.done])
            i += loop.done
            going = not loop.stopped
            chunk = min(chunk * 2, _MAX_CHUNK)
    finally:
        if arena is not None:
            with plan._arena_lock:
                plan._arenas.append(arena)
    # the loop-carried values are wherever the last swap left them: the input slots
    by_address = {a.ctypes.data: a for a in carried}
    by_address.update((outputs[n].ctypes.data, outputs[n]) for n in names_out[1:1 + n_state])
    final = [by_address[int(ffi.cast("uintptr_t", ext[slot_in[n]]))] for n in names_in[2:]]
    del keep
    return final, chunks, i - first_index, going
