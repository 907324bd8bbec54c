"""The OpenCL device side of the runtime: device choice, programs built once per
device and cached on disk, the buffer pool, device-resident tensors, and the table
of operator recorders (how each operator's kernels are dispatched).

Devices: `MLRT_OPENCL_DEVICE` (a device type "gpu"/"cpu", "platform:device" indexes,
or part of a device or platform name), else in this order: GPUs, then Intel's CPU
runtime (installed by pip with mlrt and registered by `_drivers`), then other CPU
devices, then PoCL (whose pip build aborts compiling some kernels on CPUs newer than
its LLVM).  Each is checked by a probe program built and run in a child process; the
first that passes is used, and the others are listed with their reasons.

Programs: one per operator family (`<family>.cl` after `_common.cl`) and element
type, with the sizes and constants its family module fixes as build options
(`family_options`), built in a child process (`_compiler`: a driver's compiler that
crashes or hangs cannot take this process down) and cached on disk by device, driver,
build options and source hash (`MLRT_OPENCL_CACHE`, default ~/.cache/mlrt/opencl); this
process loads the binaries.  The programs a session needs that the cache lacks are
built together in one child, with one log line saying how long it took; a program
that could not be built is marked broken in the cache and its nodes run on the CPU.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import logging
import os
import pkgutil
import shutil
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._errors import DeviceError
from .._lib import MAX_RANK, enum_value
from ..plan.memory import check_size
from . import _compiler, _drivers

try:  # the provider reports itself unavailable when pyopencl cannot load
    import pyopencl as cl
    import pyopencl.tools as cl_tools
except Exception as exc:  # pragma: no cover - depends on the machine
    cl, cl_tools, _IMPORT_ERROR = None, None, exc
else:
    _IMPORT_ERROR = None

log = logging.getLogger("mlrt")
HERE = Path(__file__).resolve().parent
SLOW_BUILD_S = 5.0  # a first build taking longer is announced when it starts to run long


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


_drivers.register(cache_dir())  # before the first OpenCL call of the process
_usable: dict[str, Path] = {}


def writable_cache() -> Path:
    """cache_dir(), or a temporary folder for this process when that cannot be written
    (the next process then builds its programs again)."""
    folder = cache_dir()
    if str(folder) not in _usable:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
            _usable[str(folder)] = folder
        except OSError as exc:
            temporary = Path(tempfile.mkdtemp(prefix="mlrt-opencl-"))
            atexit.register(shutil.rmtree, temporary, True)
            log.warning("OpenCL program cache %s cannot be written (%s); using %s for this process",
                        folder, exc.strerror or exc, temporary)
            _usable[str(folder)] = temporary
    return _usable[str(folder)]


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


def family_options(family: str) -> dict[str, int]:
    """The defines a family's program is built with besides its element type: the
    work-group sizes, tiles and vector widths its family module (`<family>.py` here)
    fixes in BUILD_OPTIONS -- the .cl file uses them without defining them, so the
    module's numbers are the only ones -- and the C enum constants it names in
    C_CONSTANTS, numbered as the runtime's headers (kernels/*.h) number them."""
    if not (HERE / f"{family}.py").exists():
        return {}
    module = importlib.import_module(f"{__package__}.{family}")
    options = dict(getattr(module, "BUILD_OPTIONS", {}))
    options.update((name, enum_value(name)) for name in getattr(module, "C_CONSTANTS", ()))
    return options


def _job(identity: str, key: str, source: str, options: str, probe: bool = False) -> "_compiler.Job":
    """A program for one device and driver, with its place in the cache."""
    digest = hashlib.sha256("\0".join([identity, options, source]).encode()).hexdigest()
    return _compiler.Job(key, source, options, writable_cache() / f"{key.split(':')[0]}-{digest[:32]}.bin", probe)


def _probe_job(identity: str) -> "_compiler.Job":
    return _job(identity, "probe", _compiler.PROBE_SOURCE, "", probe=True)


def open_device(cl_device) -> "Device":
    """A checked Device: the probe is built and run in a child process before this
    process so much as makes a context on the device, then run here too."""
    job = _probe_job(_compiler.identity(cl_device))
    if not job.path.exists() and job.verdict() is None:
        _compiler.build(_compiler.identity(cl_device), [job])
    dev = Device(cl_device)
    dev.probe()
    return dev


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


NO_DEVICE_HINT = ("For a CPU OpenCL device from pip on x86-64 Linux: pip install opencl-rt (Intel's CPU runtime; "
                  "mlrt's opencl-cpu extra: pip install \".[opencl-cpu]\" in a checkout of mlrt, "
                  "\"mlrt[opencl-cpu]\" from a package index); elsewhere install a GPU's or CPU's OpenCL driver")


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
        self._broken: dict[str, str] = {}  # programs found broken in this process: key -> why
        self.source_builds = 0  # programs this process had built from source (in child processes)
        self.identity = _compiler.identity(cl_device)
        # Float division and sqrt as the CPU kernels compute them (IEEE, correctly
        # rounded), where the device can: OpenCL lets a compiler use 2.5-ulp division and
        # 3-ulp sqrt by default, and NVIDIA's does, so a LayerNormalization over a
        # constant row of 300 ones got a mean of 0.99999994 (seen on an H100).
        self.exact_div_sqrt = bool(int(cl_device.single_fp_config)
                                   & int(cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT))

    def probe(self) -> None:
        """Build and run a tiny program (first in a child process): DeviceError if this
        device's compiler or runtime does not work."""
        prg = self._program_for(_probe_job(self.identity))
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
        key = f"{family}:{np.dtype(dtype).name}"
        broken = self.prepare([(family, dtype)])
        if broken:
            raise DeviceError(broken[key])
        return self._programs[key]

    def prepare(self, wanted) -> dict[str, str]:
        """Make the programs for (family, element type) pairs ready: what the cache lacks
        is built first, all in one child process (a session's cold start is one wait
        and one log line).  Returns {"family:type": why} for those that are broken."""
        keys = list(dict.fromkeys(f"{family}:{np.dtype(dtype).name}" for family, dtype in wanted))
        with self._lock:
            jobs, missing = {}, []
            for key in keys:
                if key in self._programs or key in self._broken:
                    continue
                try:
                    job = jobs[key] = self._family_job(*key.split(":"))
                except DeviceError as exc:
                    self._broken[key] = str(exc)
                    continue
                if not job.path.exists() and job.verdict() is None:
                    missing.append(job)
            if missing:
                self._build(missing)
            for key, job in jobs.items():
                try:
                    self._programs[key] = self._program_for(job)
                except DeviceError as exc:
                    self._broken[key] = str(exc)
                    log.warning("%s; its nodes run on the CPU", exc)
            return {key: self._broken[key] for key in keys if key in self._broken}

    def kernel(self, family: str, dtype, name: str):
        """A new kernel object (each plan holds its own: kernel objects keep their arguments)."""
        try:
            return cl.Kernel(self.program(family, dtype), name)
        except cl.Error as exc:
            raise DeviceError(f"OpenCL program '{family}' has no kernel '{name}' ({exc})") from None

    def _family_job(self, family: str, tname: str) -> "_compiler.Job":
        folder = source_dir()
        try:
            source = (folder / "_common.cl").read_text() + "\n" + (folder / f"{family}.cl").read_text()
        except OSError as exc:
            raise DeviceError(f"OpenCL kernels for '{family}' cannot be read: {exc}") from None
        options = [f"-DMLRT_{tname}=1", f"-DMLRT_MAX_RANK={MAX_RANK}"]
        options += [f"-D{name}={int(value)}" for name, value in family_options(family).items()]
        if self.exact_div_sqrt:
            options.append("-cl-fp32-correctly-rounded-divide-sqrt")
        return _job(self.identity, f"{family}:{tname}", source, " ".join(options))

    def _program_for(self, job: "_compiler.Job") -> object:
        """The job's program from the cache, built in a child process first if the cache
        lacks it.  DeviceError if it is broken."""
        prg = self._load(job)
        if prg is None:
            self._build([job])
            prg = self._load(job)
            if prg is None:
                raise DeviceError(f"OpenCL program '{job.key}' was built for {self.name} but its binary "
                                  f"cannot be loaded from {job.path}")
        return prg

    def _load(self, job: "_compiler.Job"):
        verdict = job.verdict()
        if verdict is not None:
            raise DeviceError(f"OpenCL program '{job.key}' failed to build on {self.name} (a verdict kept in "
                              f"{job.verdict_path.parent}; delete it to try again): {verdict}")
        try:
            binary = job.path.read_bytes()
        except OSError:
            return None
        try:
            with warnings.catch_warnings():  # a non-empty build log is not the user's concern
                warnings.simplefilter("ignore")
                return cl.Program(self.context, [self.cl_device], [binary]).build(options=job.options)
        except Exception:  # stale or corrupt entry: built again
            job.path.unlink(missing_ok=True)
            return None

    def _build(self, jobs: list) -> None:
        started = time.perf_counter()
        # a slow compiler (PoCL takes minutes) gets a line up front too, so the wait is explained
        notice = threading.Timer(SLOW_BUILD_S, log.warning, ["OpenCL: building %d kernel program(s) for %s, once "
                                                             "for this device, driver and mlrt version ...",
                                                             len(jobs), self.name])
        notice.daemon = True
        notice.start()
        try:
            broken = _compiler.build(self.identity, jobs)
        finally:
            notice.cancel()
        self.source_builds += len(jobs) - len(broken)
        seconds = time.perf_counter() - started
        if jobs[0].probe:
            return
        # a cold start: tell the user what the wait was (once per program, device, driver and mlrt version)
        n = len(jobs) - len(broken)
        log.warning("OpenCL: built %d kernel program%s for %s in %.1f s, once for this device, driver and mlrt "
                    "version (cached in %s)%s", n, "" if n == 1 else "s", self.name, seconds, writable_cache(),
                    f"; {len(broken)} failed, their nodes run on the CPU: " + ", ".join(sorted(broken))
                    if broken else "")

    # -- memory ------------------------------------------------------------------------------
    def allocate(self, nbytes: int):
        check_size(nbytes, f"OpenCL device {self.name}: a buffer")  # the session's memory limit
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


# -- dispatch geometry shared by the families ----------------------------------------------------
def round_up(n: int, m: int) -> int:
    """n rounded up to a multiple of m (global sizes must be multiples of local sizes)."""
    return -(-int(n) // m) * m


def local_2d(n0: int, size: int) -> tuple:
    """A work-group of `size` work-items, as wide along dim 0 (n0 work-items) as useful."""
    l0 = 1 << max(min(int(n0), size) - 1, 0).bit_length()
    return (l0, size // l0, 1)


# -- the recorder table -----------------------------------------------------------------------------
FLOATS = ("float32", "float16")


@dataclass
class Recorder:
    """How one operator runs on OpenCL: `fn(k, op, inputs, outputs)` records its kernel
    dispatches through the step builder `k` (see _plan.StepBuilder); `family` names its
    .cl file; `dtypes` the element types of its `type_input`; `supports(op, inputs)`
    (optional) refuses what it does not cover, given what is known of the inputs before
    any run (Info: dtype, shape with None for unknown dims or rank, value of
    initializers), so such a node is left to the CPU alone instead of failing its whole
    partition at plan time; `program_dtype(dtype)` (optional) names the element type of
    the program it dispatches from, when that is not the type input's, so the session
    builds that program up front."""

    fn: object
    family: str
    dtypes: tuple | None
    type_input: int = 0
    supports: object = None
    program_dtype: object = None

    def program_for(self, dtype) -> np.dtype:
        """The element type of the program it dispatches from, for a node whose type input
        is `dtype`: the same, or `program_dtype(dtype)` (data movement uses one program
        per element size).  DeviceError when there is none."""
        return np.dtype(self.program_dtype(dtype) if self.program_dtype is not None else dtype)


_recorders: dict[tuple[str, str], Recorder] = {}
_scanned = False


def recorder(*op_types: str, family: str, domain: str = "", dtypes=FLOATS, type_input: int = 0, supports=None,
             program_dtype=None):
    """Register the recorder of op types (used as a decorator in a family module)."""
    def register(fn):
        for t in op_types:
            _recorders[(domain, t)] = Recorder(fn, family, tuple(dtypes) if dtypes else None, type_input, supports,
                                               program_dtype)
        return fn
    return register


def recorder_ops() -> list[str]:
    """'domain::op' of every operator the OpenCL provider can run."""
    find_recorder("", "")
    return sorted(f"{d or 'ai.onnx'}::{t}" for d, t in _recorders)


def passed_over() -> list[str]:
    """Devices tried before the chosen one, with the reason each was passed over."""
    return list(_failures)


def find_recorder(domain: str, op_type: str) -> Recorder | None:
    global _scanned
    if not _scanned:
        for info in pkgutil.iter_modules([str(HERE)]):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__package__}.{info.name}")
        _scanned = True
    return _recorders.get((domain, op_type))
