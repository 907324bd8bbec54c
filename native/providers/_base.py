"""The execution-provider interface: everything the partitioner, the planner and the
low-level API ask of a provider, and nothing else.

Required:
- `name` (e.g. "CPUExecutionProvider");
- `supports(node, graph) -> bool`: whether it can run this node of this graph;
- `compile(graph)`: a runnable for a subgraph of nodes it claimed, with
  `run(feeds: dict[str, value]) -> dict[str, value]`.

A provider with its own memory also sets `device` (the device kind users name it
by, as in `OrtValue.ortvalue_from_numpy(x, device)`; "cpu" means host memory) and
implements `allocate`, `to_device`, `to_host` and `owns`.  The partitioner adds
memcpys where values cross between memories, and OrtValue and IOBinding reach a
device only through these methods.

Optional: `prepare(graph, indexes)` drops nodes it cannot ready after all (the
OpenCL provider builds their programs there, all at once); `wants_device` (a device
the user asked for, so falling back is worth a warning); `gpu` (the provider a
Windows ML GPU device kind means); `pool` (a host provider's native thread pool);
`device_name`; `synchronize()`.

Providers are found by module name in this folder (one class per module), or
registered from outside with `register`.  A provider module whose provider ships
files in the runtime folder (kernel sources) names their globs in a module-level
`RUNTIME_FILES = (...)`, which the build reads into the runtime's manifest.

Planning is not the provider's: `compile` returns a partition that plans itself with
the shared skeleton in native/plan (signature cache, walk, memory), supplying only how
a step is recorded and run.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

_registered: dict[str, type] = {}


class ExecutionProvider:
    name = ""
    device = "cpu"
    wants_device = False
    gpu = False
    pool = None

    def __init__(self, options: dict | None = None, *, intra_op_num_threads: int = 0):
        self.options = dict(options or {})
        self.intra_op_num_threads = intra_op_num_threads

    # -- what it runs ---------------------------------------------------------------------------
    def supports(self, node, graph) -> bool:
        """Whether this provider can run `node` (a NodeProto of `graph`)."""
        raise NotImplementedError

    def get_capability(self, graph) -> list[list[int]]:
        """The node indexes (into graph.nodes) this provider takes, as one group."""
        return [self.prepare(graph, [i for i, n in enumerate(graph.nodes) if self.supports(n, graph)])]

    def prepare(self, graph, indexes: list[int]) -> list[int]:
        """The claimed nodes it can really run (all of them unless it says otherwise)."""
        return indexes

    def compile(self, graph):
        """A runnable for `graph` (a subgraph of nodes this provider claimed):
        an object with run(feeds: dict[str, value]) -> dict[str, value]."""
        raise NotImplementedError

    # -- its memory -------------------------------------------------------------------------------
    @property
    def on_host(self) -> bool:
        return self.device == "cpu"

    @property
    def device_name(self) -> str:
        return self.device

    def allocate(self, shape, dtype):
        """An uninitialized tensor in this provider's memory."""
        from ..plan.memory import allocate
        return allocate(shape, dtype, self.name)

    def to_device(self, array):
        """A host array as a value in this provider's memory."""
        return array

    def to_host(self, value):
        """A value of this provider's memory as a host array."""
        return value

    def owns(self, value) -> bool:
        """Whether `value` lives in this provider's (device) memory."""
        return False

    def synchronize(self) -> None:
        """Wait until work queued on the device is done."""


def register(cls: type) -> type:
    """Make a provider class available by its `name` (usable as a decorator)."""
    _registered[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    _registered.pop(name, None)
    _device_providers.pop(name, None)


@functools.cache
def _found() -> dict[str, type]:
    from . import __path__ as here

    found = {}
    for info in pkgutil.iter_modules(here):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, ExecutionProvider) and obj.name and obj.__module__ == module.__name__:
                found[obj.name] = obj
    return found


def available() -> dict[str, type]:
    """Provider classes by name: this folder's modules, then those registered."""
    return {**_found(), **_registered}


_device_providers: dict[str, ExecutionProvider] = {}


def for_device(kind: str) -> ExecutionProvider | None:
    """The provider (one shared instance) whose memory a device kind names ("cpu":
    None), e.g. "opencl"; "gpu" is the provider marked `gpu`."""
    kind = str(kind).lower()
    if kind == "cpu":
        return None
    for cls in available().values():
        if cls.device != "cpu" and (cls.device == kind or (kind == "gpu" and cls.gpu)):
            p = _device_providers.get(cls.name)
            if p is None or type(p) is not cls:
                p = _device_providers[cls.name] = cls()
            return p
    return None


def owner_of(value) -> ExecutionProvider | None:
    """The device provider whose memory holds `value` (None: a host value)."""
    if value is None or type(value).__module__ in ("numpy", "builtins"):
        return None
    for name, p in list(_device_providers.items()):
        if p.owns(value):
            return p
    for cls in available().values():
        if cls.device != "cpu":
            p = for_device(cls.device)
            if p is not None and p.owns(value):
                return p
    return None


def device_kinds() -> list[str]:
    """The device kinds values can live on: "cpu" and every device provider's."""
    return ["cpu"] + sorted({cls.device for cls in available().values() if cls.device != "cpu"})
