"""OpenCLExecutionProvider: the DirectML-like GPU provider, kernels in native/opencl/*.cl.

It claims the nodes whose operator has an OpenCL recorder for the node's element
type and whose program builds on the device (a program marked broken leaves its
nodes to the CPU; the rest of the graph stays on OpenCL).  Each of its partitions
is planned per input signature and runs on one OpenCL queue with its values kept
on the device (native/opencl/_plan.py).  The device is the process's one OpenCL
device (native/opencl/_device.py: MLRT_OPENCL_DEVICE, else GPUs, then Intel's CPU
runtime, other devices, PoCL), shared with OrtValue and IOBinding.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np

from ..._errors import DeviceError, MlrtError
from ..ops import Info, make_op
from ._base import ExecutionProvider

# The OpenCL side (pyopencl and the recorders) is imported when this provider is first
# used, not when providers are listed: a CPU-only process never loads it.
_OPENCL = __name__.rsplit(".", 2)[0] + ".opencl."


def _opencl(module: str):
    """A module of native/opencl/ (_device, _memory, _programs, _recorders, _plan ...)."""
    return importlib.import_module(_OPENCL + module)

# What this provider ships in a runtime folder besides the library (native/_build.py
# reads this line without importing the module): its kernel sources and their headers.
RUNTIME_FILES = ("opencl/*.cl", "opencl/*.h")


def _static_inputs(graph, node) -> list:
    """What is known of a node's inputs before any run: dtype, shape (None for unknown
    dims, None for an unknown rank) and, for initializers, the value."""
    infos = []
    for name in node.input:
        if not name:
            infos.append(None)
        elif name in graph.initializers:
            infos.append(Info.of(graph.initializers[name]))
        else:
            vt = graph.type_of(name)
            shape = None if vt is None or vt.shape is None else \
                tuple(d if isinstance(d, int) and d >= 0 else None for d in vt.shape)
            infos.append(Info(_opencl("_plan").value_dtype(graph, name), shape))
    return infos


class OpenCLExecutionProvider(ExecutionProvider):
    name = "OpenCLExecutionProvider"
    device = "opencl"
    wants_device = True  # asked for a GPU: falling back to the CPU is worth a warning
    gpu = True  # what Windows ML's GPU device kinds run on
    memory_name = "OpenCL"  # (OrtMemoryInfo's name of its memory)

    def __init__(self, options=None, *, intra_op_num_threads: int = 0):
        super().__init__(options, intra_op_num_threads=intra_op_num_threads)
        self._device = None

    @property
    def cl_device(self):
        """The OpenCL device (chosen on first use; DeviceError when there is none)."""
        if self._device is None:
            self._device = _opencl("_device").default_device()
        return self._device

    @property
    def device_name(self) -> str:
        return self.cl_device.name

    def describe_device(self) -> dict:
        device = self.cl_device
        try:
            platform = device.cl_device.platform.name.strip()
        except Exception:  # noqa: BLE001 - a name for messages only
            platform = ""
        return {"name": device.name, "is_gpu": device.is_gpu, "platform": platform,
                "hint": "MLRT_OPENCL_DEVICE picks another OpenCL device"}

    def _program(self, node, graph):
        """(family, element type) of the program a node needs (None: none); False when
        the node has no OpenCL recorder for what it is."""
        recorder = _opencl("_recorders").find_recorder(node.domain, node.op_type)
        if recorder is None:
            return False
        dtype = None
        if recorder.dtypes is not None:
            names = list(node.input)
            ti = recorder.type_input
            name = names[ti] if ti < len(names) and names[ti] else next((n for n in names if n), None)
            dtype = _opencl("_plan").value_dtype(graph, name) if name else None
            if dtype is None or np.dtype(dtype).name not in recorder.dtypes:
                return False
        if recorder.supports is not None:
            try:
                if not recorder.supports(make_op(node, graph), _static_inputs(graph, node)):
                    return False
            except MlrtError:  # a node its operator refuses: the CPU provider reports it
                return False
        if recorder.family and dtype is not None:
            try:
                return recorder.family, recorder.program_for(dtype).name
            except DeviceError:
                return False  # no program for this element type
        return None

    def supports(self, node, graph) -> bool:
        return self._program(node, graph) is not False

    def prepare(self, graph, indexes: list[int]) -> list[int]:
        """The programs the claimed nodes need, built together (in child processes) where
        the cache lacks them; a node whose program does not build on this device stays
        on the CPU alone.  None at all when there is no OpenCL device."""
        try:
            device = self.cl_device
        except DeviceError as exc:
            warnings.warn(f"{self.name} is unavailable, its nodes run on the next provider: {exc}",
                          RuntimeWarning, stacklevel=3)
            return []
        wanted = {i: self._program(graph.nodes[i], graph) for i in indexes}
        broken = device.prepare(sorted({w for w in wanted.values() if w}))
        return [i for i, w in wanted.items() if not w or f"{w[0]}:{w[1]}" not in broken]

    def compile(self, graph):
        return _opencl("_plan").OpenCLPartition(graph, self.cl_device)

    def allocate(self, shape, dtype):
        device = self.cl_device
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        return _opencl("_memory").DeviceTensor(device.allocate(nbytes), dtype, shape, device)

    def to_device(self, array):
        if self.owns(array):
            return array
        return self.cl_device.upload(np.asarray(array))

    def to_host(self, value):
        return value.numpy() if self.owns(value) else value

    def owns(self, value) -> bool:
        memory = sys.modules.get(_OPENCL + "_memory")  # not loaded: no device tensor exists
        return memory is not None and isinstance(value, memory.DeviceTensor)

    def survey(self) -> list[str]:
        """Every OpenCL device, in the order tried, with its verdict (in use, passed: its
        probe program built and ran in a child process, or why not), then the device in
        use and how many operators it runs, or why it cannot."""
        devices, drivers, programs, recorders = (_opencl(m) for m in ("_device", "_drivers", "_programs", "_recorders"))
        lines = ["OpenCL devices (in the order tried; MLRT_OPENCL_DEVICE overrides):"]
        if drivers.cl is None:
            found = [f"(pyopencl unavailable: {drivers.IMPORT_ERROR})"]
        else:
            try:
                found = [f"{name}: {verdict}" for name, verdict in devices.survey()]
            except Exception as exc:  # noqa: BLE001 - a report, not a use
                found = [f"(no OpenCL platform: {exc})"]
        lines += [f"  {d}" for d in found or ["(none)"]]
        registered = drivers.register(programs.cache_dir()) or drivers.pip_runtimes()
        pip = f"; pip runtime: {', '.join(map(str, registered))}" if registered else ""
        try:
            device = devices.default_device()
        except Exception as exc:  # noqa: BLE001 - a report, not a use
            return lines + [f"OpenCL provider: unavailable ({exc}){pip}"]
        return lines + [f"OpenCL provider: {device.name}, {len(recorders.recorder_ops())} operators{pip}; "
                        f"programs cached in {programs.writable_cache()}"]

    def synchronize(self) -> None:
        if self._device is not None:
            self._device.queue.finish()

    def image_kernel(self, name: str, src, out, host, **args):
        """On the device (native/opencl/tensorize.py), writing into `out`."""
        kernels = _opencl("tensorize")
        src = self.to_device(src)
        if name == "tensorize":
            target = out
            if len(out.shape) == 3:  # a frame: an NHWC batch of one over its buffer
                target = _opencl("_memory").DeviceTensor(out.buffer, out.dtype, (1,) + tuple(out.shape), out.device)
            kernels.tensorize(src, target, **args)
        else:
            kernels.detensorize(src, out, **args)
        return out
