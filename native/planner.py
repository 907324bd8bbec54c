"""Memory planning: intermediate values share one arena by lifetime.

Each value lives from the step that writes it to the last step that reads it.  At
each step the values it writes are placed first-fit into the gaps between live
blocks, then the values whose last reader was this step are freed.  Offsets are
64-byte aligned for the kernels' vector loads.
"""

from __future__ import annotations

ALIGN = 64


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def plan_memory(steps, sizes: dict[str, int]) -> tuple[dict[str, int], int]:
    """Offsets for every value in `sizes` (written by `steps`), and the arena size."""
    last_use: dict[str, int] = {}
    for i, step in enumerate(steps):
        for name in step.op.node.input:
            if name in sizes:
                last_use[name] = i
    live: list[tuple[int, int, str]] = []  # (offset, size, name), sorted by offset
    offsets: dict[str, int] = {}
    arena = 0
    for i, step in enumerate(steps):
        for name in step.op.node.output:
            if name not in sizes or name in offsets:
                continue
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
        # a value nobody reads dies at once; others at their last reader
        dead = {n for n in step.op.node.input if last_use.get(n) == i}
        dead |= {n for n in step.op.node.output if n in sizes and n not in last_use}
        live = [blk for blk in live if blk[2] not in dead]
    return offsets, arena
