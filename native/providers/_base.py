"""The execution-provider interface.

A provider says which nodes it can run (`get_capability`), turns a group of nodes
into something runnable (`compile`), allocates tensors in its memory (`allocate`),
and moves tensors between host memory and its own (`to_device`, `to_host`; the
identity for host providers).  `device` is "cpu" for providers working in host
memory; the partitioner adds memcpys where values cross to or from any other.  Providers are found
by module name in this folder, or registered from outside with `register`.
"""

from __future__ import annotations

import importlib
import pkgutil

_registered: dict[str, type] = {}


class ExecutionProvider:
    name = ""
    device = "cpu"

    def __init__(self, options: dict | None = None, *, intra_op_num_threads: int = 0):
        self.options = dict(options or {})
        self.intra_op_num_threads = intra_op_num_threads

    def get_capability(self, graph) -> list[list[int]]:
        """Groups of node indexes (into graph.nodes) this provider can run."""
        raise NotImplementedError

    def compile(self, graph):
        """A runnable for `graph` (a subgraph of nodes this provider claimed):
        an object with run(feeds: dict[str, array]) -> dict[str, array]."""
        raise NotImplementedError

    def allocate(self, shape, dtype):
        """An uninitialized tensor in this provider's memory."""
        from ..launch import allocate
        return allocate(shape, dtype, self.name)

    def to_device(self, array):
        return array

    def to_host(self, value):
        return value


def register(cls: type) -> type:
    """Make a provider class available by its `name` (usable as a decorator)."""
    _registered[cls.name] = cls
    return cls


def available() -> dict[str, type]:
    from . import __path__ as here

    found = {}
    for info in pkgutil.iter_modules(here):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, ExecutionProvider) and obj.name and obj.__module__ == module.__name__:
                found[obj.name] = obj
    found.update(_registered)
    return found
