"""Memory: the limit on any one allocation, and where a plan's values live.

A value lives from the step that writes it to the last step that reads it
(`lifetimes`).  A native plan lays its intermediate values out in one arena from those
lifetimes (`arena_layout`: at each step the values it writes are placed first-fit into
the gaps between live blocks, then the values that die there are freed; offsets are
64-byte aligned for the kernels' vector loads).  An OpenCL plan gives each buffer
back to the device's pool after its last reader (`releases`).
"""

from __future__ import annotations

import os

import numpy as np

from ..._errors import ResourceExhausted

ALIGN = 64


def _memory_limit() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


MEMORY_LIMIT = _memory_limit()  # no single tensor or arena may exceed physical memory


def check_size(nbytes: int, what: str) -> None:
    """ResourceExhausted when `nbytes` is over the memory limit (never an OOM kill)."""
    if nbytes > MEMORY_LIMIT:
        raise ResourceExhausted(f"{what} needs {nbytes:,} bytes, over the limit of {MEMORY_LIMIT:,}")


def allocate(shape, dtype, where: str) -> np.ndarray:
    """np.empty, refusing sizes over the memory limit with ResourceExhausted."""
    dtype = np.dtype(dtype)
    count = 1
    for d in shape:
        count *= int(d)
    if count * dtype.itemsize > MEMORY_LIMIT:  # (the message only when needed: this runs for every output)
        check_size(count * dtype.itemsize, f"{where}: a {list(shape)} {dtype.name} tensor")
    try:
        return np.empty(shape, dtype)
    except (MemoryError, ValueError) as exc:
        raise ResourceExhausted(f"{where}: cannot allocate a {list(shape)} {dtype.name} tensor ({exc})") from None


def lifetimes(reads, writes) -> dict[str, tuple[int, int]]:
    """(first, last) step of every value a step writes: the step that writes it and the
    last step that reads it (its own step when nothing does).  `reads` and `writes` hold
    one collection of names per step; names no step writes (inputs, constants) are left
    out.  In the order the values are written."""
    spans: dict[str, list[int]] = {}
    for i, (ins, outs) in enumerate(zip(reads, writes)):
        for name in ins:
            span = spans.get(name)
            if span is not None:
                span[1] = i
        for name in outs:
            if name and name not in spans:
                spans[name] = [i, i]
    return {name: (first, last) for name, (first, last) in spans.items()}


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def arena_layout(spans: dict[str, tuple[int, int]], sizes: dict[str, int]) -> tuple[dict[str, int], int]:
    """Offsets in one arena for the values in `sizes` (their spans from `lifetimes`), so
    that no two values alive at the same step overlap, and the arena's size."""
    born: dict[int, list[str]] = {}
    dies: dict[int, set[str]] = {}
    for name, (first, last) in spans.items():
        if name in sizes:
            born.setdefault(first, []).append(name)
            dies.setdefault(last, set()).add(name)
    live: list[tuple[int, int, str]] = []  # (offset, size, name), sorted by offset
    offsets: dict[str, int] = {}
    arena = 0
    for step in sorted(born.keys() | dies.keys()):
        for name in born.get(step, ()):
            size = _align(max(sizes[name], 1))
            offset, cursor = None, 0
            for off, sz, _ in live:
                if off - cursor >= size:
                    offset = cursor
                    break
                cursor = max(cursor, off + sz)
            if offset is None:
                offset = cursor
            offsets[name] = offset
            live.append((offset, size, name))
            live.sort()
            arena = max(arena, offset + size)
        gone = dies.get(step)
        if gone:
            live = [blk for blk in live if blk[2] not in gone]
    return offsets, arena


def releases(spans: dict[str, tuple[int, int]], n_steps: int, keep) -> list[list[str]]:
    """For each step, the values (not in `keep`) whose last reader it is."""
    out: list[list[str]] = [[] for _ in range(n_steps)]
    for name, (_, last) in spans.items():
        if name not in keep:
            out[last].append(name)
    return out
