"""LearningModelDevice: where a session runs (Windows ML's LearningModelDevice)."""

from __future__ import annotations

import enum
import functools
import platform
import threading
import warnings

from .._errors import DeviceError, InvalidArgument
from ..native.providers import for_device


class DeviceWarning(UserWarning):
    """A GPU device kind runs on a device that is not a GPU (for OpenCL, a CPU runtime
    such as Intel's from pip): slower than the CPU device, and the first session
    compiles its kernels.  Said once per process."""


_warned = threading.Event()  # (DeviceWarning: once per process)


def _warn_not_a_gpu(kind: "LearningModelDeviceKind", provider, info: dict) -> None:
    if _warned.is_set():
        return
    _warned.set()
    platform_name = f" ({info['platform']})" if info.get("platform") else ""
    what = provider.name.removesuffix("ExecutionProvider")
    hint = f"; {info['hint']}" if info.get("hint") else ""
    warnings.warn(f"LearningModelDevice({kind.name}) runs on '{info['name']}'{platform_name}, an {what} device that "
                  "is a CPU, not a GPU: models usually run slower there than on LearningModelDeviceKind.CPU, "
                  f"and the first session compiles {what} programs (tens of seconds; "
                  f"cached on disk for later ones). Use the CPU device unless you mean to test the {what} path"
                  f"{hint}.", DeviceWarning, stacklevel=3)


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
    provider marked as the GPU (the OpenCL provider, on the device it picks: a GPU
    first; Intel's CPU OpenCL runtime from pip where there is none; MLRT_OPENCL_DEVICE
    chooses), or on the device provider `device` names (its device kind, e.g. a
    registered provider's), with the nodes it cannot run on the CPU; image tensors are
    made on that device.  One device is in use per provider and process, so
    HIGH_PERFORMANCE and MIN_POWER name the same one.  DeviceError when no such device
    works (`python -m mlrt` says why)."""

    def __init__(self, kind: LearningModelDeviceKind = LearningModelDeviceKind.DEFAULT, *,
                 device: str | None = None):
        if not isinstance(kind, LearningModelDeviceKind):
            raise InvalidArgument(f"LearningModelDevice: expected a LearningModelDeviceKind, got {kind!r}")
        if device is not None and kind not in _GPU_KINDS:
            raise InvalidArgument(f"LearningModelDevice: device='{device}' needs a GPU kind, got {kind.name}")
        self.kind = kind
        self._gpu = None  # the device provider, for the GPU kinds
        if self.is_gpu:
            self._gpu = for_device(device or "gpu")
            try:
                if self._gpu is None:
                    raise DeviceError(f"no execution provider for the '{device}' device is installed" if device
                                      else "no GPU execution provider is installed")
                info = self._gpu.describe_device()
                self._name = info["name"]
            except DeviceError as exc:
                raise DeviceError(f"LearningModelDevice({kind.name}): no {device or 'GPU'} device works here "
                                  f"({exc}); `python -m mlrt` lists the devices tried") from None
            if not info.get("is_gpu", True) and self._gpu.gpu:
                _warn_not_a_gpu(kind, self._gpu, info)

    @property
    def is_gpu(self) -> bool:
        """Whether the kind is a GPU kind (a device provider), whatever hardware it has."""
        return self.kind in _GPU_KINDS

    @property
    def memory(self) -> str:
        """The device kind its sessions' values and frames live on: "cpu", or the device
        provider's (as OrtValue.device_name() says)."""
        return self._gpu.device if self._gpu is not None else "cpu"

    @property
    def device_name(self) -> str:
        return self._name if self._gpu is not None else _cpu_name()

    @property
    def providers(self) -> list[str]:
        """The execution providers a session on this device asks for, in order."""
        return [self._gpu.name, "CPUExecutionProvider"] if self.is_gpu else ["CPUExecutionProvider"]

    def __repr__(self) -> str:
        return f"LearningModelDevice({self.kind.name}: {self.device_name})"


_GPU_KINDS = (LearningModelDeviceKind.GPU, LearningModelDeviceKind.GPU_HIGH_PERFORMANCE,
              LearningModelDeviceKind.GPU_MIN_POWER)
