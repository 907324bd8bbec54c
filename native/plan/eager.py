"""One node run now, on concrete arrays, one C kernel call: constant folding and
graphs whose shapes depend on run-time data use it."""

from __future__ import annotations

import functools

import numpy as np

from ..._errors import InvalidModel, NotImplemented
from .. import _lib
from ..ops import Info, Op
from .memory import allocate


def kernel_index(op: Op, launch, inputs: list[Info | None]) -> int:
    ti = launch.type_input
    dtype = inputs[ti].dtype if ti < len(inputs) and inputs[ti] is not None else None
    k = _lib.find_kernel(op.domain, launch.kernel, op.opset, dtype)
    if k < 0:
        tname = np.dtype(dtype).name if dtype is not None else "any type"
        raise NotImplemented(f"{op.where}: no CPU kernel for {launch.kernel} (opset {op.opset}) on {tname}")
    return k


_HALVES = ("float16", "bfloat16")


@functools.cache
def _is_half(dtype) -> bool:
    return np.dtype(dtype).name in _HALVES  # (dtype.name is slow to ask for every node)


def computes_halves_in_float(op: Op, launch, inputs: list[Info | None]) -> bool:
    """True when the op has no kernel for its float16/bfloat16 inputs but has one for
    float32: it then runs on float32 copies and its half outputs are rounded back
    once at the end (numpy's own float16 matmul and reductions accumulate in float)."""
    ti = launch.type_input
    t = inputs[ti].dtype if ti < len(inputs) and inputs[ti] is not None else None
    if t is None or not _is_half(t):
        return False
    return (_lib.find_kernel(op.domain, launch.kernel, op.opset, t) < 0
            and _lib.find_kernel(op.domain, launch.kernel, op.opset, np.float32) >= 0)


def _run_in_float(op: Op, arrays: list, outs: list[Info | None], pool) -> list:
    widened = [a.astype(np.float32) if a is not None and a.dtype.name in _HALVES else a for a in arrays]
    results = run_eager(op, widened, pool)
    with np.errstate(over="ignore"):  # beyond the half range is inf, as a half kernel would give
        return [r.astype(o.dtype) if r is not None and o is not None and np.dtype(o.dtype).name in _HALVES else r
                for r, o in zip(results, outs)]


def _moves_strings(op: Op, arrays: list) -> bool:
    return bool(op.moves) and any(isinstance(arrays[k], np.ndarray) and arrays[k].dtype.kind in "OUS"
                                  for k in op.moved_inputs(len(arrays)))


def _run_on_element_numbers(op: Op, arrays: list, pool) -> list:
    """Strings through a data-movement op: its int64 kernel moves element numbers (each
    string's place in one table of all moved inputs), then the numbers pick the strings.
    Same kernel, so the same shape rules and index checks as for numbers."""
    moved = op.moved_inputs(len(arrays))
    first = next(k for k in moved if isinstance(arrays[k], np.ndarray) and arrays[k].dtype.kind in "OUS")
    numbered, table, offset = list(arrays), [], 0
    for k in moved:
        a = arrays[k]
        if a is None:
            continue
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "OUS":
            got = np.dtype(a.dtype).name if isinstance(a, np.ndarray) else type(a).__name__
            raise InvalidModel(f"{op.where}: input {k} is {got} but input {first} holds strings; "
                               "they must have one element type")
        numbered[k] = np.arange(offset, offset + a.size, dtype=np.int64).reshape(a.shape)
        table.append(a.reshape(-1))
        offset += a.size
    strings = np.concatenate(table) if table else np.empty(0, dtype=object)
    return [strings[r] if r is not None else None for r in run_eager(op, numbered, pool)]


def run_eager(op: Op, arrays: list[np.ndarray | None], pool) -> list[np.ndarray | None]:
    """Run one node on concrete arrays (used for constant folding and dynamic graphs)."""
    if op.moves and _moves_strings(op, arrays):
        return _run_on_element_numbers(op, arrays, pool)
    infos = [Info.of(a) if a is not None else None for a in arrays]
    outs = op.infer(infos)
    if all(o is None or o.value is not None for o in outs):
        return [o.value if o is not None else None for o in outs]
    if op.kernel is None:
        raise InvalidModel(f"{op.where}: could not compute its outputs")
    launch = op.launch(infos, outs)
    if computes_halves_in_float(op, launch, infos):
        return _run_in_float(op, arrays, outs, pool)
    kernel = kernel_index(op, launch, infos)
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
        if a.dtype.kind in "OUS":  # a kernel that takes strings reads them as an mlrt_strings
            u = _lib.utf32(a)
            if u is None:  # (not exact in that layout: the op's Python, which is exact)
                if type(op).run_host is Op.run_host:
                    raise NotImplemented(f"{op.where}: these strings are not for its C kernel")
                return op.run_host(list(arrays[:len(arrays) - len(launch.extra)]), None)
            head, kept = _lib.strings_header(u)
            keep.append(kept)
            _lib.fill_tensor(ins[i], _lib.STRING, a.shape, None, head)
            keep.append(head)
            continue
        if type(a) is not np.ndarray or not a.flags.c_contiguous:
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
