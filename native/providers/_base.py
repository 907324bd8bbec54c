"""The execution-provider interface: everything the partitioner, the planner, the
low-level API and media's frames ask of a provider, and nothing else.

Required:
- `name` (e.g. "CPUExecutionProvider");
- `supports(node, graph) -> bool`: whether it can run this node of this graph;
- `compile(graph)`: a runnable for a subgraph of nodes it claimed, with
  `run(feeds: dict[str, value]) -> dict[str, value]`.

A provider with its own memory also sets `device` (the device kind users name it
by, as in `OrtValue.ortvalue_from_numpy(x, device)`; "cpu" means host memory) and
implements `allocate`, `to_device`, `to_host` and `owns`.  The partitioner adds
memcpys where values cross between memories, and OrtValue, IOBinding and media's
frames reach a device only through these methods and the optional ones below.

Optional, with defaults: `prepare(graph, indexes)` drops nodes it cannot ready after
all (the OpenCL provider builds their programs there, all at once); `wants_device` (a
device the user asked for, so falling back is worth a warning); `gpu` (the provider a
Windows ML GPU device kind means); `memory_name` (onnxruntime's OrtMemoryInfo name of
its memory); `pool` (a host provider's native thread pool); `device_name` and
`describe_device()`; `survey()` (its devices, for `python -m mlrt`); `synchronize()`; `quick_run(runnable, feeds, output_names)` (a
faster run of a host partition); `image_kernel(...)` (media's tensorize and
detensorize on the device; the default runs them on the host).

Providers are found by module name in this folder (one class per module; a module
that cannot be imported is left out), or registered from outside with `register`.  A
provider module whose provider ships files in the runtime folder (kernel sources)
names their globs in a module-level `RUNTIME_FILES = (...)`, which the build reads into
the runtime's manifest.

Planning is not the provider's: `compile` returns a partition that plans itself with
the shared skeleton in native/plan (signature cache, walk, memory), supplying only how
a step is recorded and run.
"""

from __future__ import annotations

import functools
import importlib
import logging
import pkgutil

import numpy as np

_registered: dict[str, type] = {}


class ExecutionProvider:
    name = ""
    device = "cpu"
    wants_device = False
    gpu = False
    memory_name = ""
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

    def describe_device(self) -> dict:
        """What users are told of the device: "name", "is_gpu" (whether the hardware is a
        GPU), and where known "platform" and "hint" (how to choose another)."""
        return {"name": self.device_name, "is_gpu": self.gpu}

    def survey(self) -> list[str]:
        """Lines for `python -m mlrt`: the devices it can use, in the order it tries them,
        and the one in use or why there is none."""
        try:
            return [f"{self.name}: {self.describe_device()['name']}"]
        except Exception as exc:  # noqa: BLE001 - a report, not a use
            return [f"{self.name}: unavailable ({exc})"]

    def synchronize(self) -> None:
        """Wait until work queued on the device is done."""

    # -- optional runs ----------------------------------------------------------------------------
    def quick_run(self, runnable, feeds: dict, output_names):
        """For a graph that is one partition of this provider: a run with the least Python
        around it for feeds of exactly this signature (run(feeds) -> outputs in
        `output_names` order, or None), or None (the default): the partition's run()."""
        return None

    def image_kernel(self, name: str, src, out, host, **args):
        """Media's image kernel `name` from `src` into `out`: "tensorize" (a frame's pixels
        -> image `index` of an image tensor, or into a frame [H, W, C] as an NHWC batch of
        one) or "detensorize" (the reverse); native/kernels/tensorize.h says what they
        compute.  `out` is in this memory, `src` in it or on the host; `host(src, out=...,
        **args)` is the C kernel's call.  Returns the value holding the result: `out`, or
        a new value in this memory.  The default runs `host` on host copies and moves the
        result here with to_device; a provider with image kernels of its own overrides it."""
        result = np.array(self.to_host(out))
        host(self.to_host(src), out=result if name != "tensorize" or result.ndim == 4 else result[None], **args)
        return self.to_device(result)


def register(cls: type) -> type:
    """Make a provider class available by its `name` (usable as a decorator)."""
    _registered[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Forget a provider registered with `register` (and its shared instance)."""
    _registered.pop(name, None)
    _device_providers.pop(name, None)


@functools.cache
def _found() -> dict[str, type]:
    from . import __path__ as here

    found = {}
    for info in pkgutil.iter_modules(here):
        if info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"{__package__}.{info.name}")
        except ImportError as exc:  # a provider whose module cannot load is simply not available
            logging.getLogger("mlrt").info("provider module %s not loaded: %s", info.name, exc)
            continue
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
    None; a provider's `device`); "gpu" is the provider marked `gpu`."""
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


def device_classes() -> dict[str, type]:
    """The device providers' classes by device kind (host providers left out)."""
    found = {}
    for cls in available().values():
        if cls.device != "cpu":
            found.setdefault(cls.device, cls)
    return found
