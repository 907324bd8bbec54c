"""Memory: the limit on any one allocation, and where a plan's values live.

Every tensor, arena and scratch buffer mlrt allocates for a session is checked against
that session's limit before it is allocated, and refused with ResourceExhausted (naming
what and how many bytes) rather than left to the OS's OOM killer.  The limit is the
session config entry `session.memory_limit_bytes` (default: 80% of physical memory);
the session makes it the current one (`limiting`) while it is made and while it runs.

A value lives from the step that writes it to the last step that reads it
(`lifetimes`).  A native plan lays its intermediate values out in one arena from those
lifetimes (`arena_layout`: at each step the values it writes are placed first-fit into
the gaps between live blocks, then the values that die there are freed; offsets are
64-byte aligned for the kernels' vector loads).  An OpenCL plan gives each buffer
back to the device's pool after its last reader (`releases`).  A value kept in
another's bytes (an operator's `aliases`, ops/_base.py) has no bytes of its own: both
plans find the value that holds it with `root`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os

import numpy as np

from ..._errors import InvalidArgument, ResourceExhausted

ALIGN = 64


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


PHYSICAL_MEMORY = _physical_memory()
DEFAULT_FRACTION = 0.8
# the limit of a session that sets none (session.memory_limit_bytes): no single tensor or
# arena may exceed 80% of physical memory
MEMORY_LIMIT = int(PHYSICAL_MEMORY * DEFAULT_FRACTION)
CONFIG_KEY = "session.memory_limit_bytes"

# the limit of the session being made or run in this context (a ContextVar, as the
# terminate flag and the profiler are): several sessions with different limits may run
# in different threads at once
# (None: MEMORY_LIMIT, read when checked, so a harness may lower it for the process)
_limit: contextvars.ContextVar = contextvars.ContextVar("mlrt_memory_limit", default=None)


def limit() -> int:
    """The memory limit, in bytes, of the session being made or run in this context."""
    return _limit.get() or MEMORY_LIMIT


def parse_limit(config: dict) -> int | None:
    """A session's limit from its config entries (SessionOptions.add_session_config_entry):
    `session.memory_limit_bytes`, a number of bytes > 0 (1e9, 512MB, 2GiB also read), or
    None (the default, MEMORY_LIMIT) when the entry is not set or "0"."""
    text = config.get(CONFIG_KEY)
    if text is None:
        return None
    raw = str(text).strip()
    units = {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
             "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "b": 1}
    scale = 1
    for suffix, factor in units.items():
        if raw.lower().endswith(suffix):
            raw, scale = raw[: -len(suffix)].strip(), factor
            break
    try:
        value = float(raw) * scale
    except ValueError:
        value = -1
    if not value >= 0 or value != value or value == float("inf"):
        raise InvalidArgument(f"session config entry '{CONFIG_KEY}' must be a number of bytes >= 0 "
                              f"(0: the default, {DEFAULT_FRACTION:.0%} of physical memory), got {text!r}")
    return int(value) or None


@contextlib.contextmanager
def limiting(nbytes: int | None):
    """Make `nbytes` (None: the default) the memory limit while the block runs, in this
    context only."""
    token = _limit.set(nbytes)
    try:
        yield nbytes
    finally:
        _limit.reset(token)


def idle() -> bool:
    """Whether no session in this context has set a limit."""
    return _limit.get() is None


def enter(nbytes: int | None):
    """`limiting` for a hot path: sets the limit, returns the token for `leave` (None,
    setting nothing, where the default would replace the default)."""
    if nbytes is None and _limit.get() is None:
        return None
    return _limit.set(nbytes)


def leave(token) -> None:
    if token is not None:
        _limit.reset(token)


def _refuse(nbytes: int, what: str, cap: int) -> None:
    whose = "the session's memory limit" if _limit.get() else \
        f"the default memory limit, {DEFAULT_FRACTION:.0%} of physical memory"
    raise ResourceExhausted(f"{what} needs {nbytes:,} bytes, over the limit of {cap:,} bytes "
                            f"({whose}: session config entry '{CONFIG_KEY}')")


def check_size(nbytes: int, what: str) -> None:
    """ResourceExhausted when `nbytes` is over the memory limit (never an OOM kill)."""
    cap = _limit.get() or MEMORY_LIMIT
    if nbytes > cap:
        _refuse(nbytes, what, cap)


def allocate(shape, dtype, where: str) -> np.ndarray:
    """np.empty, refusing sizes over the memory limit with ResourceExhausted."""
    dtype = np.dtype(dtype)
    count = 1
    for d in shape:
        count *= int(d)
    cap = _limit.get() or MEMORY_LIMIT
    if count * dtype.itemsize > cap:  # (the message only when needed: this runs for every output)
        _refuse(count * dtype.itemsize, f"{where}: a {list(shape)} {dtype.name} tensor", cap)
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


def root(within: dict[str, tuple[str, int]], name: str) -> tuple[str, int]:
    """The value whose own bytes hold `name`, and the byte offset of `name` in them:
    `within` maps a value kept in another's bytes to (that value, its byte offset
    there), and is followed to a value that is in no other's."""
    at = 0
    while name in within:
        name, offset = within[name]
        at += offset
    return name, at


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
