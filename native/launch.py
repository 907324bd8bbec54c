"""One kernel call, and the memory it writes.

`run_eager` runs one node on concrete arrays -- constant folding and graphs whose
shapes depend on run-time data use it -- and `allocate` is the one place output
tensors are created, refusing sizes over the memory limit with ResourceExhausted.
"""

from __future__ import annotations

import os

import numpy as np

from .._errors import InvalidModel, NotImplemented, ResourceExhausted
from . import _lib
from .graph import Graph
from .ops import Info, Op, lookup


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
            _lib.raise_status(lib.MLRT_ERR_OUT_OF_MEMORY, "thread pool")
        self.handle = ffi.gc(pool, lib.mlrt_threadpool_destroy)
        self.size = lib.mlrt_threadpool_size(pool)


def kernel_index(op: Op, launch, inputs: list[Info | None]) -> int:
    ti = launch.type_input
    dtype = inputs[ti].dtype if ti < len(inputs) and inputs[ti] is not None else None
    k = _lib.find_kernel(op.domain, launch.kernel, op.opset, dtype)
    if k < 0:
        tname = np.dtype(dtype).name if dtype is not None else "any type"
        raise NotImplemented(f"{op.where}: no CPU kernel for {launch.kernel} (opset {op.opset}) on {tname}")
    return k


_HALVES = ("float16", "bfloat16")


def computes_halves_in_float(op: Op, launch, inputs: list[Info | None]) -> bool:
    """True when the op has no kernel for its float16/bfloat16 inputs but has one for
    float32: it then runs on float32 copies and its half outputs are rounded back
    once at the end (numpy's own float16 matmul and reductions accumulate in float)."""
    ti = launch.type_input
    t = inputs[ti].dtype if ti < len(inputs) and inputs[ti] is not None else None
    if t is None or np.dtype(t).name not in _HALVES:
        return False
    return (_lib.find_kernel(op.domain, launch.kernel, op.opset, t) < 0
            and _lib.find_kernel(op.domain, launch.kernel, op.opset, np.float32) >= 0)


def _run_in_float(op: Op, arrays: list, outs: list[Info | None], pool) -> list:
    widened = [a.astype(np.float32) if a is not None and a.dtype.name in _HALVES else a for a in arrays]
    results = run_eager(op, widened, pool)
    with np.errstate(over="ignore"):  # beyond the half range is inf, as a half kernel would give
        return [r.astype(o.dtype) if r is not None and o is not None and np.dtype(o.dtype).name in _HALVES else r
                for r, o in zip(results, outs)]


def describe(descs, slots, i, info: Info | None, view, slot) -> None:
    if info is None:
        descs[i].dtype = 0
        descs[i].rank = 0
        slots[i].base, slots[i].offset = -1, 0
        return
    shape, strides = (view.shape, view.strides) if view is not None else (info.shape, None)
    _lib.fill_tensor(descs[i], info.dtype, shape, strides)
    slots[i].base, slots[i].offset = slot


def fold(op: Op, inputs: list[Info | None], pool) -> tuple[list, bool]:
    """A node's output infos at planning time, and whether they are constants: values
    that follow from shapes alone (Shape, Size) or from constant inputs, computed here
    once on the C kernels (never for random ops).  Planners of every provider use it."""
    outs = op.infer(inputs)
    if all(o is None or o.value is not None for o in outs):
        return outs, True
    if op.kernel is not None and op.deterministic and all(i.value is not None for i in inputs if i is not None):
        values = run_eager(op, [i.value if i is not None else None for i in inputs], pool)
        return [Info.of(v) if v is not None else o for v, o in zip(values, outs)], True
    return outs, False


def run_eager(op: Op, arrays: list[np.ndarray | None], pool: ThreadPool | None) -> list[np.ndarray | None]:
    """Run one node on concrete arrays (used for constant folding and dynamic graphs)."""
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
