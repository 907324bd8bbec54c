"""Devices and memory descriptions with onnxruntime's names: OrtDevice, OrtMemoryInfo,
their enums, OrtArenaCfg, and the execution-provider device records (OrtEpDevice,
OrtHardwareDevice) that get_ep_devices() and InferenceSession.get_input_epdevices() give.

These are descriptions only.  mlrt keeps a value's memory with the value (a host numpy
array, or a device provider's buffer: _ortvalue.py), so an OrtDevice or OrtMemoryInfo
names where memory is; it allocates nothing.  The device names mlrt has are those of
OrtValue.ortvalue_from_numpy: "cpu", each device provider's `device` (also "gpu" for
the one marked as the GPU), asked of the registered providers.  OrtDevice.make also
takes onnxruntime's other names ("cuda", "dml", "cann", "npu", "webgpu") and gives the
same numbers onnxruntime does, so code that builds or compares them runs; mlrt has no
memory on those devices.
"""

from __future__ import annotations

import enum
import operator

from .._errors import InvalidArgument, NotImplemented
from ._enum import OrtEnum


class OrtDeviceVendorId(enum.IntEnum):
    """PCI vendor ids, as onnxruntime's."""

    NONE = 0x0000
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


class OrtMemType(OrtEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1  # (another name for CPU_OUTPUT, as in onnxruntime)
    DEFAULT = 0


class OrtAllocatorType(OrtEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtMemoryInfoDeviceType(OrtEnum):
    CPU = 0
    GPU = 1
    FPGA = 2
    NPU = 3


class OrtDeviceMemoryType(OrtEnum):
    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class OrtHardwareDeviceType(OrtEnum):
    CPU = 0
    GPU = 1
    NPU = 2


class OrtExecutionProviderDevicePolicy(OrtEnum):
    DEFAULT = 0
    PREFER_CPU = 1
    PREFER_NPU = 2
    PREFER_GPU = 3
    MAX_PERFORMANCE = 4
    MAX_EFFICIENCY = 5
    MIN_OVERALL_POWER = 6


class ArenaExtendStrategy(OrtEnum):
    kNextPowerOfTwo = 0
    kSameAsRequested = 1


_CPU, _GPU, _FPGA, _NPU = 0, 1, 2, 3  # OrtDevice's device types (OrtMemoryInfoDeviceType's numbers)

# onnxruntime's names for OrtDevice.make -> (device type, the vendor onnxruntime gives it when
# none is passed; None: the vendor argument is the device id's neighbour, left 0).  A table,
# since these are onnxruntime's devices, not mlrt's providers; mlrt's device providers add
# their own kinds (_device_names).
_ORT_DEVICE_NAMES = {
    "cpu": (_CPU, None), "gpu": (_GPU, None), "npu": (_NPU, None),
    "cuda": (_GPU, OrtDeviceVendorId.NVIDIA), "dml": (_GPU, OrtDeviceVendorId.MICROSOFT),
    "cann": (_NPU, OrtDeviceVendorId.HUAWEI), "webgpu": (_GPU, OrtDeviceVendorId.NONE),
}


def _device_providers() -> dict[str, type]:
    """The registered device providers' classes by device kind."""
    from ..native.providers import device_classes
    return device_classes()


def _device_names() -> dict[str, tuple]:
    """OrtDevice.make's names: onnxruntime's, then each device provider's kind (a GPU, or an NPU)."""
    return {**_ORT_DEVICE_NAMES, **{kind: (_GPU if cls.gpu else _NPU, None)
                                    for kind, cls in _device_providers().items()}}


def _int(value, what: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgument(f"{what} must be an int, got {value!r}") from None


class OrtDevice:
    """A device: its type (0 CPU, 1 GPU, 2 FPGA, 3 NPU), memory type (0 default, 5 host
    accessible), vendor id and device id, made with OrtDevice.make(name, device_id,
    vendor_id=-1)."""

    def __init__(self, device_type: int = _CPU, mem_type: int = 0, vendor_id: int = 0, device_id: int = 0,
                 name: str = "cpu"):
        self._type = _int(device_type, "OrtDevice: the device type")
        self._mem_type = _int(mem_type, "OrtDevice: the memory type")
        self._vendor_id = _int(vendor_id, "OrtDevice: the vendor id")
        self._device_id = _int(device_id, "OrtDevice: the device id")
        self._name = name  # the name it was made with: "cpu", "gpu", a provider's kind, "cuda", ...

    @staticmethod
    def make(ort_device_name: str, device_id: int, vendor_id: int = -1) -> "OrtDevice":
        """The OrtDevice onnxruntime makes for `ort_device_name` ("cpu", "gpu", "npu",
        "cuda", "dml", "cann", "webgpu", and mlrt's device providers' kinds): with
        vendor_id < 0, the vendor of a named accelerator (cuda: NVIDIA, dml: Microsoft,
        cann: Huawei), otherwise 0; a vendor_id >= 0 is taken as given."""
        name = str(ort_device_name)
        names = _ORT_DEVICE_NAMES if name in _ORT_DEVICE_NAMES else _device_names()
        if name not in names:
            raise InvalidArgument(f"Unsupported device type: {name} (OrtDevice.make takes "
                                  f"{', '.join(names)})")
        device_type, alias_vendor = names[name]
        vendor_id = _int(vendor_id, "OrtDevice.make: vendor_id")
        if vendor_id < 0:
            vendor_id = int(alias_vendor) if alias_vendor is not None else 0
        return OrtDevice(device_type, 0, vendor_id, _int(device_id, "OrtDevice.make: device_id"), name)

    def device_id(self) -> int:
        return self._device_id

    def device_type(self) -> int:
        return self._type

    def device_vendor_id(self) -> int:
        return self._vendor_id

    def device_mem_type(self) -> int:
        return self._mem_type

    def _mlrt_device(self) -> str:
        """The device kind mlrt's OrtValue names this memory by ("cpu", a device
        provider's kind, "gpu"); onnxruntime's other accelerators have none in mlrt."""
        if self._type == _CPU or self._mem_type == OrtDeviceMemoryType.HOST_ACCESSIBLE:
            return "cpu"
        kinds = _device_providers()
        if self._name in kinds or (self._name == "gpu" and any(c.gpu for c in kinds.values())):
            return self._name
        raise NotImplemented(f"mlrt has no memory on the {self._name} device (its devices: "
                             f"{', '.join(['cpu', *kinds])}" + (", and 'gpu' for the GPU's" if any(
                                 c.gpu for c in kinds.values()) else "") + ")")

    def __eq__(self, other) -> bool:
        return isinstance(other, OrtDevice) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return self._type, self._mem_type, self._vendor_id, self._device_id

    def __repr__(self) -> str:
        return (f"OrtDevice({self._name!r}, type={self._type}, mem_type={self._mem_type}, "
                f"vendor_id={self._vendor_id:#06x}, device_id={self._device_id})")


# OrtMemoryInfo's names (onnxruntime's allocator names) -> (device type, device memory type, vendor);
# mlrt's device providers add their `memory_name`s (_memory_names)
_ORT_MEMORY_NAMES = {
    "Cpu": (OrtMemoryInfoDeviceType.CPU, OrtDeviceMemoryType.DEFAULT, OrtDeviceVendorId.NONE),
    "Cuda": (OrtMemoryInfoDeviceType.GPU, OrtDeviceMemoryType.DEFAULT, OrtDeviceVendorId.NVIDIA),
    "CudaPinned": (OrtMemoryInfoDeviceType.GPU, OrtDeviceMemoryType.HOST_ACCESSIBLE, OrtDeviceVendorId.NVIDIA),
    "DML": (OrtMemoryInfoDeviceType.GPU, OrtDeviceMemoryType.DEFAULT, OrtDeviceVendorId.MICROSOFT),
    "Cann": (OrtMemoryInfoDeviceType.NPU, OrtDeviceMemoryType.DEFAULT, OrtDeviceVendorId.HUAWEI),
    "CannPinned": (OrtMemoryInfoDeviceType.NPU, OrtDeviceMemoryType.HOST_ACCESSIBLE, OrtDeviceVendorId.HUAWEI),
    "WebGPU_Buffer": (OrtMemoryInfoDeviceType.GPU, OrtDeviceMemoryType.DEFAULT, OrtDeviceVendorId.NONE),
}


def _memory_type(cls) -> OrtMemoryInfoDeviceType:
    return OrtMemoryInfoDeviceType.GPU if cls.gpu else OrtMemoryInfoDeviceType.NPU


def _memory_names() -> dict[str, tuple]:
    return {**_ORT_MEMORY_NAMES, **{cls.memory_name or kind: (_memory_type(cls), OrtDeviceMemoryType.DEFAULT,
                                                              OrtDeviceVendorId.NONE)
                                    for kind, cls in _device_providers().items()}}


class OrtMemoryInfo:
    """Where an allocator's memory is: OrtMemoryInfo(name, allocator_type, device_id,
    mem_type), name one of onnxruntime's allocator names ("Cpu", "Cuda", "CudaPinned",
    "DML", "Cann", "CannPinned", "WebGPU_Buffer") or a device provider's `memory_name`; any name with
    OrtMemoryInfo.create_v2.  Read-only properties, as onnxruntime's."""

    def __init__(self, name: str, allocator_type, device_id: int, mem_type):
        name = str(name)
        names = _ORT_MEMORY_NAMES if name in _ORT_MEMORY_NAMES else _memory_names()
        if name not in names:
            raise InvalidArgument(f"OrtMemoryInfo: Specified device '{name}' is not supported. Try "
                                  f"CreateMemoryInfo_V2 (known names: {', '.join(names)})")
        device_type, device_mem_type, vendor = names[name]
        if name == "Cpu":
            device_id = 0  # (onnxruntime's host memory has one id)
        self._set(name, allocator_type, device_id, mem_type, device_type, device_mem_type, vendor)

    def _set(self, name, allocator_type, device_id, mem_type, device_type, device_mem_type, vendor_id) -> None:
        self._name = name
        self._allocator_type = _enum(OrtAllocatorType, allocator_type, "allocator_type")
        self._device_id = _int(device_id, "OrtMemoryInfo: device_id")
        self._mem_type = _enum(OrtMemType, mem_type, "mem_type")
        self._device_type = _enum(OrtMemoryInfoDeviceType, device_type, "device_type")
        self._device_mem_type = _enum(OrtDeviceMemoryType, device_mem_type, "device_mem_type")
        self._vendor_id = _int(vendor_id, "OrtMemoryInfo: vendor_id")

    @staticmethod
    def create_v2(name: str, device_type, vendor_id: int, device_id: int, device_mem_type, alignment: int,
                  allocator_type) -> "OrtMemoryInfo":
        """An OrtMemoryInfo with any name (onnxruntime's CreateMemoryInfo_V2); `alignment`
        is kept by onnxruntime for its allocators and unused here."""
        _int(alignment, "OrtMemoryInfo.create_v2: alignment")
        info = OrtMemoryInfo.__new__(OrtMemoryInfo)
        host = _int(device_mem_type, "device_mem_type") == OrtDeviceMemoryType.HOST_ACCESSIBLE
        info._set(str(name), allocator_type, device_id, OrtMemType.CPU if host else OrtMemType.DEFAULT, device_type,
                  device_mem_type, vendor_id)
        return info

    @classmethod
    def _cpu(cls) -> "OrtMemoryInfo":
        """The host memory session inputs and outputs live in, as onnxruntime reports it."""
        return cls("Cpu", OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, OrtMemType.DEFAULT)

    name = property(lambda self: self._name)
    allocator_type = property(lambda self: self._allocator_type)
    device_id = property(lambda self: self._device_id)
    mem_type = property(lambda self: self._mem_type)
    device_mem_type = property(lambda self: self._device_mem_type)
    device_vendor_id = property(lambda self: self._vendor_id)

    def __eq__(self, other) -> bool:
        return isinstance(other, OrtMemoryInfo) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self._name, self._allocator_type, self._device_id, self._mem_type, self._device_type,
                self._device_mem_type, self._vendor_id)

    def __repr__(self) -> str:
        return (f"OrtMemoryInfo({self._name!r}, {self._allocator_type.name}, device_id={self._device_id}, "
                f"{self._mem_type.name})")


def _enum(cls, value, what: str):
    try:
        return cls(_int(value, f"{cls.__name__} ({what})"))
    except ValueError:
        raise InvalidArgument(f"{value!r} is not an {cls.__name__} ({what})") from None


_ARENA_KEYS = ("max_mem", "arena_extend_strategy", "initial_chunk_size_bytes", "max_dead_bytes_per_chunk",
               "initial_growth_chunk_size_bytes", "max_power_of_two_extend_bytes")


class OrtArenaCfg:
    """onnxruntime's arena settings: OrtArenaCfg(max_mem, arena_extend_strategy,
    initial_chunk_size_bytes, max_dead_bytes_per_chunk) or OrtArenaCfg({name: value}).
    Accepted and kept (apps pass it to create_and_register_allocator and provider
    options), but mlrt has no arena to configure: host tensors are numpy arrays and the
    OpenCL provider pools its own buffers.  Unset values are -1 (max_mem 0), as in
    onnxruntime."""

    def __init__(self, *args):
        values = dict.fromkeys(_ARENA_KEYS, -1)
        values["max_mem"] = 0
        if len(args) == 1 and isinstance(args[0], dict):
            for key, value in args[0].items():
                if key not in values:
                    raise InvalidArgument(f"Invalid OrtArenaCfg option: {key} (options: {', '.join(_ARENA_KEYS)})")
                values[key] = _int(value, f"OrtArenaCfg option {key}")
        elif len(args) == 4:
            for key, value in zip(_ARENA_KEYS, args):
                values[key] = _int(value, f"OrtArenaCfg: {key}")
        else:
            raise InvalidArgument("OrtArenaCfg takes (max_mem, arena_extend_strategy, initial_chunk_size_bytes, "
                                  "max_dead_bytes_per_chunk) or a dict of options")
        for key, value in values.items():
            setattr(self, key, value)

    def __setattr__(self, key, value):
        if key not in _ARENA_KEYS:
            raise AttributeError(f"OrtArenaCfg has no setting '{key}'")
        object.__setattr__(self, key, _int(value, f"OrtArenaCfg.{key}"))

    def __repr__(self) -> str:
        return "OrtArenaCfg(" + ", ".join(f"{k}={getattr(self, k)}" for k in _ARENA_KEYS) + ")"


class OrtHardwareDevice:
    """A device found on this machine, as onnxruntime describes it (type, vendor, ids,
    metadata)."""

    def __init__(self, type: OrtHardwareDeviceType, vendor: str, vendor_id: int, device_id: int,  # noqa: A002
                 metadata: dict | None = None):
        self.type, self.vendor, self.vendor_id, self.device_id = type, vendor, vendor_id, device_id
        self.metadata = dict(metadata or {})

    def __repr__(self) -> str:
        return f"OrtHardwareDevice({self.type.name}, {self.vendor!r}, vendor_id={self.vendor_id:#06x})"


class OrtEpDevice:
    """An execution provider and a device it runs on (ep_name, ep_vendor, ep_metadata,
    ep_options, device: an OrtHardwareDevice, memory_info(memory type))."""

    def __init__(self, ep_name: str, device: OrtHardwareDevice, memory: OrtMemoryInfo,
                 ep_metadata: dict | None = None, ep_options: dict | None = None):
        self.ep_name, self.ep_vendor, self.device = ep_name, "mlrt", device
        if not ep_metadata:
            from .._version import __version__
            ep_metadata = {"version": __version__}
        self.ep_metadata = dict(ep_metadata)
        self.ep_options = dict(ep_options or {})
        self._memory = memory

    def memory_info(self, memory_type=OrtDeviceMemoryType.DEFAULT) -> OrtMemoryInfo | None:
        """The memory the provider keeps its tensors in (None for host-accessible memory,
        which mlrt's providers do not have apart from the host itself)."""
        return self._memory if int(memory_type) == OrtDeviceMemoryType.DEFAULT else None

    def create_sync_stream(self):
        raise NotImplemented("OrtEpDevice.create_sync_stream: mlrt has no sync streams (its device providers "
                             "order their work themselves)")

    def __repr__(self) -> str:
        return f"OrtEpDevice({self.ep_name!r} on {self.device!r})"


def _cpu_vendor() -> tuple[str, int]:
    """The host CPU's vendor name and PCI vendor id, read from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    v = line.split(":", 1)[1].strip()
                    return {"GenuineIntel": ("Intel", int(OrtDeviceVendorId.INTEL)),
                            "AuthenticAMD": ("AMD", int(OrtDeviceVendorId.AMD))}.get(v, (v, 0))
    except OSError:
        pass
    return "", 0


_cpu_ep_device: OrtEpDevice | None = None


def cpu_ep_device() -> OrtEpDevice:
    """The CPUExecutionProvider on the host CPU (one record, made once)."""
    global _cpu_ep_device
    if _cpu_ep_device is None:
        vendor, vendor_id = _cpu_vendor()
        _cpu_ep_device = OrtEpDevice("CPUExecutionProvider",
                                     OrtHardwareDevice(OrtHardwareDeviceType.CPU, vendor, vendor_id, 0),
                                     OrtMemoryInfo._cpu())
    return _cpu_ep_device


def get_ep_devices() -> list[OrtEpDevice]:
    """The execution providers mlrt has and the devices they run on: the CPU provider on
    the host CPU, then each device provider that can start here (as it describes its device)."""
    from ..native.providers import for_device
    found = [cpu_ep_device()]
    for kind, cls in _device_providers().items():
        try:
            label = str(for_device(kind).describe_device()["name"] or kind)
        except Exception:  # noqa: BLE001 - a provider that cannot start here is simply not listed
            continue
        device = OrtHardwareDevice(OrtHardwareDeviceType.GPU if cls.gpu else OrtHardwareDeviceType.NPU, label, 0, 0,
                                   {"mlrt_device": kind})
        memory = OrtMemoryInfo.create_v2(cls.memory_name or kind, _memory_type(cls), 0, 0,
                                         OrtDeviceMemoryType.DEFAULT, 0, OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
        found.append(OrtEpDevice(cls.name, device, memory))
    return found


class OrtEpAssignedNode:
    """A node of an OrtEpAssignedSubgraph: name, op_type, domain."""

    def __init__(self, name: str, op_type: str, domain: str):
        self.name, self.op_type, self.domain = name, op_type, domain

    def __repr__(self) -> str:
        return f"OrtEpAssignedNode({self.name!r}, {self.domain or 'ai.onnx'}::{self.op_type})"


class OrtEpAssignedSubgraph:
    """The nodes one execution provider runs (get_provider_graph_assignment_info)."""

    def __init__(self, ep_name: str, nodes: list[OrtEpAssignedNode]):
        self.ep_name = ep_name
        self._nodes = list(nodes)

    def get_nodes(self) -> list[OrtEpAssignedNode]:
        return list(self._nodes)

    def __repr__(self) -> str:
        return f"OrtEpAssignedSubgraph({self.ep_name!r}, {len(self._nodes)} node(s))"


def create_and_register_allocator(mem_info: OrtMemoryInfo, arena_cfg: OrtArenaCfg | None = None) -> None:
    """Accepted and ignored: onnxruntime shares one allocator among sessions with it;
    mlrt's sessions allocate host memory through numpy and device memory through their
    provider's pool, with nothing to register.  The arguments are checked."""
    _check_allocator_args("create_and_register_allocator", mem_info, arena_cfg)


def create_and_register_allocator_v2(provider_type: str, mem_info: OrtMemoryInfo, options: dict,
                                     arena_cfg: OrtArenaCfg | None = None) -> None:
    """As create_and_register_allocator (accepted, ignored); `provider_type` and the
    string `options` are checked, not used."""
    if not isinstance(provider_type, str):
        raise InvalidArgument(f"create_and_register_allocator_v2: provider_type must be a str, got {provider_type!r}")
    dict(options or {})
    _check_allocator_args("create_and_register_allocator_v2", mem_info, arena_cfg)


def _check_allocator_args(where: str, mem_info, arena_cfg) -> None:
    if not isinstance(mem_info, OrtMemoryInfo):
        raise InvalidArgument(f"{where}: expected an OrtMemoryInfo, got {type(mem_info).__name__}")
    if arena_cfg is not None and not isinstance(arena_cfg, OrtArenaCfg):
        raise InvalidArgument(f"{where}: expected an OrtArenaCfg or None, got {type(arena_cfg).__name__}")
