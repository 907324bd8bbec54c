"""The OpenCL device side of the runtime: device choice, programs built once per
device and cached on disk, the buffer pool, device-resident tensors, and the table
of kernel launchers.

Programs: one per operator family (`<family>.cl` after `_common.cl`) and element
type, keyed on disk by device, platform/driver version, build options and source
hash (`MLRT_OPENCL_CACHE`, default ~/.cache/mlrt/opencl), so a second session, in
this process or another, builds nothing.  Device: `MLRT_OPENCL_DEVICE` (a device
type "gpu"/"cpu", "platform:device" indexes, or part of a device or platform name),
else GPUs first, then any device -- each checked by building a small probe program,
so a driver whose compiler cannot target this machine is passed over with a warning.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pkgutil
import tempfile
import logging
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._errors import DeviceError

try:  # the provider reports itself unavailable when pyopencl cannot load
    import pyopencl as cl
    import pyopencl.tools as cl_tools
except Exception as exc:  # pragma: no cover - depends on the machine
    cl, cl_tools, _IMPORT_ERROR = None, None, exc
else:
    _IMPORT_ERROR = None

log = logging.getLogger("mlrt")
HERE = Path(__file__).resolve().parent
_PROBE = "__kernel void mlrt_probe(__global float *x) { x[get_global_id(0)] *= 2.0f; }"


def source_dir() -> Path:
    """Where the .cl files are read from: the selected runtime's opencl/ folder when it
    has one (a system runtime ships its kernels), else this package folder."""
    from .. import _lib  # late: loading the native library is not needed to list devices
    try:
        folder = Path(_lib.runtime().path).parent / "opencl"
    except Exception:
        return HERE
    return folder if (folder / "_common.cl").exists() else HERE


def cache_dir() -> Path:
    env = os.environ.get("MLRT_OPENCL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlrt" / "opencl"


# -- devices -------------------------------------------------------------------------------------
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


_device_lock = threading.Lock()
_chosen: "Device | None" = None
_failures: list[str] = []


def default_device() -> "Device":
    """The process-wide OpenCL device; DeviceError (naming what was tried) if none works."""
    global _chosen
    with _device_lock:
        if _chosen is not None:
            return _chosen
        if cl is None:
            raise DeviceError(f"OpenCL is not available: pyopencl failed to load ({_IMPORT_ERROR})")
        devices = all_devices()
        spec = os.environ.get("MLRT_OPENCL_DEVICE")
        if spec:
            candidates = _matching(devices, spec)
            if not candidates:
                raise DeviceError(f"MLRT_OPENCL_DEVICE={spec!r} matches no OpenCL device; devices: "
                                  + ("; ".join(_describe(d) for d in devices) or "none"))
        else:
            gpus = [d for d in devices if d.type & cl.device_type.GPU]
            candidates = gpus + [d for d in devices if d not in gpus]
        _failures.clear()
        for d in candidates:
            try:
                dev = Device(d)
                dev.probe()
            except Exception as exc:
                lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
                reason = next((ln for ln in lines if "error" in ln.lower() and "failed:" not in ln), None)
                _failures.append(f"{_describe(d)}: {reason or (lines[-1] if lines else type(exc).__name__)}")
                continue
            if _failures:
                log.info("OpenCL devices passed over: %s", "; ".join(_failures))
            _chosen = dev
            return dev
        raise DeviceError("no usable OpenCL device"
                          + (": " + "; ".join(_failures) if _failures else " (no OpenCL platform found)")
                          + ". On a CPU newer than the LLVM inside pocl-binary-distribution, install the "
                            "system PoCL (e.g. apt-get install pocl-opencl-icd)")


class Device:
    """One OpenCL device: its context, an in-order queue, a buffer pool and its programs."""

    def __init__(self, cl_device):
        self.cl_device = cl_device
        self.name = cl_device.name.strip()
        self.context = cl.Context([cl_device])
        self.queue = cl.CommandQueue(self.context)
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.is_gpu = bool(cl_device.type & cl.device_type.GPU)
        self.max_work_group_size = int(cl_device.max_work_group_size)
        self.local_mem_size = int(cl_device.local_mem_size)
        self.max_alloc = int(cl_device.max_mem_alloc_size)
        self._programs: dict[str, object] = {}
        self._lock = threading.RLock()
        self.source_builds = 0  # programs built from source (not found in either cache)
        self.identity = "|".join([self.name, cl_device.platform.name, cl_device.platform.version,
                                  cl_device.driver_version, cl_device.version])

    def probe(self) -> None:
        prg = self._build_cached("probe", _PROBE, "")
        buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=np.ones(4, np.float32))
        cl.Kernel(prg, "mlrt_probe")(self.queue, (4,), None, buf)
        out = np.empty(4, np.float32)
        cl.enqueue_copy(self.queue, out, buf)
        if not np.array_equal(out, np.full(4, 2, np.float32)):
            raise DeviceError(f"OpenCL device {self.name} computed a wrong probe result {out}")

    # -- programs ---------------------------------------------------------------------------
    def program(self, family: str, dtype) -> object:
        """The family's program built for one element type (see _common.cl)."""
        tname = np.dtype(dtype).name
        key = f"{family}:{tname}"
        with self._lock:
            prg = self._programs.get(key)
            if prg is None:
                folder = source_dir()
                try:
                    source = (folder / "_common.cl").read_text() + "\n" + (folder / f"{family}.cl").read_text()
                except OSError as exc:
                    raise DeviceError(f"OpenCL kernels for '{family}' cannot be read: {exc}") from None
                prg = self._programs[key] = self._build_cached(family, source, f"-DMLRT_{tname}=1")
            return prg

    def kernel(self, family: str, dtype, name: str):
        """A new kernel object (each plan holds its own: kernel objects keep their arguments)."""
        try:
            return cl.Kernel(self.program(family, dtype), name)
        except cl.Error as exc:
            raise DeviceError(f"OpenCL program '{family}' has no kernel '{name}' ({exc})") from None

    def _build_cached(self, family: str, source: str, options: str):
        digest = hashlib.sha256("\0".join([self.identity, options, source]).encode()).hexdigest()
        path = cache_dir() / f"{family}-{digest[:32]}.bin"
        if path.exists():
            try:
                return cl.Program(self.context, [self.cl_device], [path.read_bytes()]).build(options=options)
            except Exception:
                pass  # stale or corrupt entry: rebuild from source below
        try:
            with warnings.catch_warnings():  # a non-empty build log is not the user's concern
                warnings.simplefilter("ignore")
                prg = cl.Program(self.context, source).build(options=options)
        except Exception as exc:
            log = str(exc).strip()
            raise DeviceError(f"OpenCL program '{family}' failed to build on {self.name}: {log[-2000:]}") from None
        self.source_builds += 1
        try:
            binary = prg.get_info(cl.program_info.BINARIES)[0]
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:
                f.write(binary)
            os.replace(f.name, path)
        except Exception:
            pass  # a read-only cache only costs the next session a build
        return prg

    # -- memory ------------------------------------------------------------------------------
    def allocate(self, nbytes: int):
        if nbytes > self.max_alloc:
            raise DeviceError(f"OpenCL device {self.name}: a {nbytes:,}-byte buffer is over its "
                              f"{self.max_alloc:,}-byte allocation limit")
        try:
            return self.pool.allocate(max(int(nbytes), 4))
        except Exception as exc:
            raise DeviceError(f"OpenCL device {self.name}: cannot allocate {nbytes:,} bytes ({exc})") from None

    def upload(self, array: np.ndarray, blocking: bool = False) -> "DeviceTensor":
        """A device copy of a host array; non-blocking unless asked (the tensor then
        keeps the host array alive until it dies itself)."""
        a = np.require(array, requirements="C")
        t = DeviceTensor(self.allocate(a.nbytes), a.dtype, a.shape, self)
        if a.nbytes:
            cl.enqueue_copy(self.queue, t.buffer, a, is_blocking=blocking)
        if not blocking:
            t._keep = a
        return t


class DeviceTensor:
    """A tensor in OpenCL device memory: buffer, dtype, shape (contiguous)."""

    __slots__ = ("buffer", "dtype", "shape", "device", "_keep")

    def __init__(self, buffer, dtype, shape, device: Device):
        self.buffer = buffer
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(d) for d in shape)
        self.device = device
        self._keep = None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def numpy(self) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        if out.nbytes:
            try:
                cl.enqueue_copy(self.device.queue, out, self.buffer)
            except Exception as exc:
                raise DeviceError(f"OpenCL device {self.device.name}: reading a result back failed ({exc})") from None
        return out

    def write(self, source) -> None:
        """Copy a same-sized host array or device tensor into this tensor's buffer."""
        nbytes = self.nbytes
        if source.nbytes != nbytes:
            raise DeviceError(f"cannot write {source.nbytes} bytes into a {nbytes}-byte device tensor")
        if not nbytes:
            return
        if isinstance(source, DeviceTensor):
            cl.enqueue_copy(self.device.queue, self.buffer, source.buffer, byte_count=nbytes)
        else:
            cl.enqueue_copy(self.device.queue, self.buffer, np.require(source, requirements="C"))

    def __repr__(self) -> str:
        return f"DeviceTensor({self.dtype.name}{list(self.shape)} on {self.device.name})"


# -- launch geometry shared by the families ----------------------------------------------------
def round_up(n: int, m: int) -> int:
    """n rounded up to a multiple of m (global sizes must be multiples of local sizes)."""
    return -(-int(n) // m) * m


def local_2d(n0: int, size: int) -> tuple:
    """A work-group of `size` work-items, as wide along dim 0 (n0 work-items) as useful."""
    l0 = 1 << max(min(int(n0), size) - 1, 0).bit_length()
    return (l0, size // l0, 1)


# -- the launcher table ----------------------------------------------------------------------------
FLOATS = ("float32", "float16")


@dataclass
class Launcher:
    """How one operator runs on OpenCL: `fn(k, op, inputs, outputs)` records its kernel
    launches through the builder `k` (see _plan.Builder); `family` names its .cl file;
    `dtypes` the element types of its `type_input`; `supports(op[, inputs])` (optional)
    refuses attribute combinations it does not cover."""

    fn: object
    family: str
    dtypes: tuple | None
    type_input: int = 0
    supports: object = None

    def accepts(self, op, inputs) -> bool:
        """supports(op), or supports(op, inputs) with what is known of the inputs before
        any run (Info: dtype, shape with None for unknown dims or rank, value of
        initializers) -- so a node is left to the CPU alone instead of failing its
        whole partition at plan time."""
        if self.supports is None:
            return True
        if self.supports.__code__.co_argcount >= 2:
            return bool(self.supports(op, inputs))
        return bool(self.supports(op))


_launchers: dict[tuple[str, str], Launcher] = {}
_scanned = False


def launcher(*op_types: str, family: str, domain: str = "", dtypes=FLOATS, type_input: int = 0, supports=None):
    """Register a launcher for op types (used as a decorator in a family module)."""
    def register(fn):
        for t in op_types:
            _launchers[(domain, t)] = Launcher(fn, family, tuple(dtypes) if dtypes else None, type_input, supports)
        return fn
    return register


def launcher_ops() -> list[str]:
    """'domain::op' of every operator the OpenCL provider can run."""
    find_launcher("", "")
    return sorted(f"{d or 'ai.onnx'}::{t}" for d, t in _launchers)


def passed_over() -> list[str]:
    """Devices tried before the chosen one, with the reason each was passed over."""
    return list(_failures)


def find_launcher(domain: str, op_type: str) -> Launcher | None:
    global _scanned
    if not _scanned:
        for info in pkgutil.iter_modules([str(HERE)]):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__package__}.{info.name}")
        _scanned = True
    return _launchers.get(("" if domain == "ai.onnx" else domain, op_type))
