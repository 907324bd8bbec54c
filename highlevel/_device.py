"""LearningModelDevice: where a session runs (Windows ML's LearningModelDevice)."""

from __future__ import annotations

import enum
import functools
import platform
import threading
import warnings

from .._errors import DeviceError, InvalidArgument
from ..native.providers import _base as providers


class DeviceWarning(UserWarning):
    """A GPU device kind runs on an OpenCL device that is not a GPU (a CPU OpenCL
    runtime, such as Intel's from pip): slower than the CPU device, and the first session
    compiles its kernels.  Said once per process."""


_warned = threading.Event()  # (DeviceWarning: once per process)


def _warn_not_a_gpu(kind: "LearningModelDeviceKind", name: str, platform_name: str) -> None:
    if _warned.is_set():
        return
    _warned.set()
    warnings.warn(f"LearningModelDevice({kind.name}) runs on '{name}'{platform_name}, an OpenCL device that is "
                  "a CPU, not a GPU: models usually run slower there than on LearningModelDeviceKind.CPU, "
                  "and the first session compiles OpenCL programs (tens of seconds; "
                  "cached on disk for later ones). Use the CPU device unless you mean to test the OpenCL path; "
                  "MLRT_OPENCL_DEVICE picks another OpenCL device.", DeviceWarning, stacklevel=3)


class LearningModelDeviceKind(enum.Enum):
    DEFAULT = 0
    CPU = 1
    GPU = 2
    GPU_HIGH_PERFORMANCE = 3
    GPU_MIN_POWER = 4


@functools.cache
def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


class LearningModelDevice:
    """DEFAULT and CPU run on the CPU provider (C kernels).  The GPU kinds run on the
    OpenCL provider, on the device it picks (a GPU first; Intel's CPU OpenCL runtime
    from pip where there is none; MLRT_OPENCL_DEVICE chooses), with the nodes it cannot
    run on the CPU; image tensors are made on that device.  A machine has one OpenCL
    device in use per process, so HIGH_PERFORMANCE and MIN_POWER name the same one.
    DeviceError when no OpenCL device works (`python -m mlrt` says why)."""

    def __init__(self, kind: LearningModelDeviceKind = LearningModelDeviceKind.DEFAULT):
        if not isinstance(kind, LearningModelDeviceKind):
            raise InvalidArgument(f"LearningModelDevice: expected a LearningModelDeviceKind, got {kind!r}")
        self.kind = kind
        self._gpu = None  # the GPU provider (the OpenCL one), for the GPU kinds
        if self.is_gpu:
            self._gpu = providers.for_device("gpu")
            try:
                if self._gpu is None:
                    raise DeviceError("no GPU execution provider is installed")
                self._name = self._gpu.device_name
                cl = getattr(self._gpu, "cl_device", None)
            except DeviceError as exc:
                raise DeviceError(f"LearningModelDevice({kind.name}): no OpenCL device works here ({exc}); "
                                  "`python -m mlrt` lists the devices tried") from None
            if cl is not None and getattr(cl, "is_gpu", True) is False:
                _warn_not_a_gpu(kind, self._name, _platform(cl))

    @property
    def is_gpu(self) -> bool:
        """Whether the kind is a GPU kind (the OpenCL provider), whatever device OpenCL has."""
        return self.kind in (LearningModelDeviceKind.GPU, LearningModelDeviceKind.GPU_HIGH_PERFORMANCE,
                             LearningModelDeviceKind.GPU_MIN_POWER)

    @property
    def device_name(self) -> str:
        return self._name if self._gpu is not None else _cpu_name()

    @property
    def providers(self) -> list[str]:
        """The execution providers a session on this device asks for, in order."""
        return [self._gpu.name, "CPUExecutionProvider"] if self.is_gpu else ["CPUExecutionProvider"]

    def __repr__(self) -> str:
        return f"LearningModelDevice({self.kind.name}: {self.device_name})"


def _platform(device) -> str:
    """' (platform name)' of an OpenCL device, or ''."""
    try:
        return f" ({device.cl_device.platform.name.strip()})"
    except Exception:  # noqa: BLE001 - a name for a message only
        return ""
