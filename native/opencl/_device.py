"""The OpenCL device: which one the process uses, and what a Device holds.

Devices: `MLRT_OPENCL_DEVICE` (a device type "gpu"/"cpu", "platform:device" indexes,
or part of a device or platform name), else in this order: GPUs, then Intel's CPU
runtime (installed by pip with mlrt and registered by `_drivers`), then other CPU
devices, then PoCL (whose pip build aborts compiling some kernels on CPUs newer than
its LLVM).  Each is checked by a probe program built and run in a child process; the
first that passes is used, and the others are listed with their reasons.

A Device is one OpenCL device's context and in-order queue, with its programs
(`_programs.DevicePrograms`: built once, cached on disk) and its memory
(`_memory.DeviceMemory`: the buffer pool).
"""

from __future__ import annotations

import logging
import os
import threading

import numpy as np

from ..._errors import DeviceError
from . import _compiler, _drivers
from ._drivers import IMPORT_ERROR, cl
from ._memory import DeviceMemory
from ._programs import DevicePrograms, cache_dir, probe_job, writable_cache

log = logging.getLogger("mlrt")
_drivers.register(cache_dir())  # before the first OpenCL call of the process

NO_DEVICE_HINT = ("For a CPU OpenCL device from pip on x86-64 Linux: pip install opencl-rt (Intel's CPU runtime; "
                  "mlrt's opencl-cpu extra: pip install \".[opencl-cpu]\" in a checkout of mlrt, "
                  "\"mlrt[opencl-cpu]\" from a package index); elsewhere install a GPU's or CPU's OpenCL driver")


class Device(DevicePrograms, DeviceMemory):
    """One OpenCL device: its context, an in-order queue, its programs and its buffer pool."""

    def __init__(self, cl_device):
        self.cl_device = cl_device
        self.name = cl_device.name.strip()
        self.context = cl.Context([cl_device])
        self.queue = cl.CommandQueue(self.context)
        self.is_gpu = bool(cl_device.type & cl.device_type.GPU)
        self.max_work_group_size = int(cl_device.max_work_group_size)
        self.local_mem_size = int(cl_device.local_mem_size)
        DevicePrograms.__init__(self)
        DeviceMemory.__init__(self)

    def probe(self) -> None:
        """Build and run a tiny program (first in a child process): DeviceError if this
        device's compiler or runtime does not work."""
        prg = self._program_for(probe_job(self.identity))
        buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=np.ones(4, np.float32))
        cl.Kernel(prg, "mlrt_probe")(self.queue, (4,), None, buf)
        out = np.empty(4, np.float32)
        cl.enqueue_copy(self.queue, out, buf)
        if not np.array_equal(out, np.full(4, 2, np.float32)):
            raise DeviceError(f"OpenCL device {self.name} computed a wrong probe result {out}")


# -- which device ---------------------------------------------------------------------------------
def all_devices() -> list:
    if cl is None:
        return []
    found = []
    try:
        platforms = cl.get_platforms()
    except Exception:
        return []
    for p in platforms:
        try:
            found.extend(p.get_devices())
        except Exception:
            continue
    return found


def _describe(d) -> str:
    return f"{d.name.strip()} ({d.platform.name.strip()} {d.platform.version.strip()})"


def _matching(devices: list, spec: str) -> list:
    spec = spec.strip()
    kinds = {"gpu": cl.device_type.GPU, "cpu": cl.device_type.CPU, "accelerator": cl.device_type.ACCELERATOR}
    if spec.lower() in kinds:
        return [d for d in devices if d.type & kinds[spec.lower()]]
    if ":" in spec and all(s.strip().isdigit() for s in spec.split(":", 1)):
        pi, di = (int(s) for s in spec.split(":", 1))
        platforms = cl.get_platforms()
        if pi < len(platforms):
            devs = platforms[pi].get_devices()
            return [devs[di]] if di < len(devs) else []
        return []
    return [d for d in devices if spec.lower() in d.name.lower() or spec.lower() in d.platform.name.lower()]


def preference(d) -> int:
    """Rank of a device when MLRT_OPENCL_DEVICE does not choose: GPUs, then Intel's CPU
    runtime, then other devices, then PoCL (lower is tried first)."""
    platform = d.platform.name.lower()
    if d.type & cl.device_type.GPU:
        return 0
    if "intel" in platform:
        return 1
    if "portable computing language" in platform or "pocl" in platform:
        return 3
    return 2


def candidates() -> list:
    """The devices to try, in order (MLRT_OPENCL_DEVICE, else by preference)."""
    devices = all_devices()
    spec = os.environ.get("MLRT_OPENCL_DEVICE")
    if not spec:
        return sorted(devices, key=preference)  # stable: platform order within a rank
    chosen = _matching(devices, spec)
    if not chosen:
        raise DeviceError(f"MLRT_OPENCL_DEVICE={spec!r} matches no OpenCL device; devices: "
                          + ("; ".join(_describe(d) for d in devices) or "none"))
    return chosen


def _reason(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    reason = next((ln for ln in lines if "error" in ln.lower() and "failed:" not in ln), None)
    return reason or (lines[-1] if lines else type(exc).__name__)


def open_device(cl_device) -> Device:
    """A checked Device: the probe is built and run in a child process before this
    process so much as makes a context on the device, then run here too."""
    job = probe_job(_compiler.identity(cl_device))
    if not job.path.exists() and job.verdict() is None:
        _compiler.build(_compiler.identity(cl_device), [job])
    dev = Device(cl_device)
    dev.probe()
    return dev


_device_lock = threading.Lock()
_chosen: Device | None = None
_failures: list[str] = []


def default_device() -> Device:
    """The process-wide OpenCL device; DeviceError (naming what was tried) if none works."""
    global _chosen
    with _device_lock:
        if _chosen is not None:
            return _chosen
        if cl is None:
            raise DeviceError(f"OpenCL is not available: pyopencl failed to load ({IMPORT_ERROR})")
        _failures.clear()
        for d in candidates():
            try:
                dev = open_device(d)
            except Exception as exc:
                _failures.append(f"{_describe(d)}: {_reason(exc)}")
                continue
            if _failures:
                log.info("OpenCL devices passed over: %s", "; ".join(_failures))
            _chosen = dev
            return dev
        raise DeviceError("no usable OpenCL device"
                          + (": " + "; ".join(_failures) if _failures else " (no OpenCL platform found)")
                          + ". " + NO_DEVICE_HINT)


def passed_over() -> list[str]:
    """Devices tried before the chosen one, with the reason each was passed over."""
    return list(_failures)


def survey() -> list[tuple[str, str]]:
    """Every device with its verdict, in the order they are tried: "in use", "passed",
    or why it failed its probe (built and run in a child process); and the programs
    the cache has marked broken for it."""
    if cl is None:
        return []
    try:
        chosen = default_device()
    except DeviceError:
        chosen = None
    out = []
    for d in sorted(all_devices(), key=preference):
        if chosen is not None and d == chosen.cl_device:
            verdict = "in use"
        else:
            try:
                open_device(d)
            except Exception as exc:
                verdict = f"failed: {_reason(exc)}"
            else:
                verdict = "passed"
        broken = sorted(k for k in _compiler.verdicts(writable_cache(), _compiler.identity(d)) if k != "probe")
        if broken:
            verdict += f"; {len(broken)} program(s) marked broken, run on the CPU: {', '.join(broken)}"
        out.append((_describe(d), verdict))
    return out
