"""Graph optimizer: named rewrites, each in its own file, run by level.

A pass module defines LEVEL (1 basic, 2 extended, 99 all), ORDER (passes of one
level run by increasing ORDER) and apply(graph, context) -> number of rewrites.
Levels follow onnxruntime's GraphOptimizationLevel: 0 disables everything.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass


@dataclass
class Context:
    pool: object = None  # a ThreadPool for passes that run kernels (constant folding)
    level: int = 99      # the level optimize() runs (a pass of a higher level that must run early reads it)
    providers: tuple = ("CPUExecutionProvider",)  # the session's, in its order (a fusion that only the CPU
                                                   # runs leaves graphs meant for other devices alone)


@functools.cache
def passes() -> list:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            found.append(importlib.import_module(f"{__name__}.{info.name}"))
    return sorted(found, key=lambda m: (m.LEVEL, m.ORDER, m.__name__))


def optimize(graph, level: int, context: Context | None = None, disabled: set[str] = frozenset()) -> dict[str, int]:
    """Run every pass up to `level` (repeating the set until nothing changes); return rewrite counts."""
    context = context or Context()
    context.level = level
    counts: dict[str, int] = {}
    for _ in range(4):
        changed = 0
        for p in passes():
            name = p.__name__.rsplit(".", 1)[-1]
            if p.LEVEL <= level and name not in disabled:
                n = p.apply(graph, context)
                counts[name] = counts.get(name, 0) + n
                changed += n
        if not changed:
            break
    return counts
