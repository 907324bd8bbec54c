"""OpenCL programs: their sources, the structs they share with the host, and the cache on
disk that builds each once per device and driver.

A program is one operator family (`<family>.cl` after `_common.cl`) built for one
element type, with the sizes and constants its family module fixes as build options
(`family_options`).  A `.cl` file names the headers it shares with the host by
`#include "<name>.h"`; the header's text takes that line's place when the source is read
(`program_source`), so the source hash the cache is keyed on covers it.  The host reads
the same headers through cffi and fills their structs by field name (`struct_bytes`): a
struct a kernel reads is declared once, in its header.

Programs are built in a child process (`_compiler`: a driver's compiler that crashes or
hangs cannot take this process down) and cached on disk by device, driver, build
options and source hash (`MLRT_OPENCL_CACHE`, default ~/.cache/mlrt/opencl); this
process loads the binaries.  The programs a session needs that the cache lacks are
built together in one child, with one log line saying how long it took; a program that
could not be built is marked broken in the cache and its nodes run on the CPU.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import importlib
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

from ..._errors import DeviceError
from .. import _lib
from .._lib import MAX_RANK, enum_value
from . import _compiler
from ._drivers import cl

log = logging.getLogger("mlrt")
HERE = Path(__file__).resolve().parent
SLOW_BUILD_S = 5.0  # a first build taking longer is announced when it starts to run long


# -- sources ------------------------------------------------------------------------------------
def source_dir() -> Path:
    """Where the .cl files and their headers are read from: the selected runtime's opencl/
    folder when it has one (a system runtime ships its kernels), else this package folder."""
    try:
        folder = Path(_lib.runtime().path).parent / "opencl"
    except Exception:
        return HERE
    return folder if (folder / "_common.cl").exists() else HERE


# `#include "<name>.h"` (a header beside the programs) or `#include "../kernels/<name>.h"` (a C
# kernel's parameter header, the same struct the CPU kernel reads); a header's own system includes
# (<stdint.h>: _common.cl typedefs its types) are dropped
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"((?:\.\./kernels/)?[^"/]+\.h)"[ \t]*$', re.MULTILINE)
_SYSTEM_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+<[^>]+>[ \t]*$', re.MULTILINE)


def program_source(folder: Path, family: str) -> str:
    """A family's program as one text: `_common.cl`, then `<family>.cl`, each line
    `#include "<name>.h"` replaced by that header of `folder`, `#include
    "../kernels/<name>.h"` by that C kernel header (the first time; by nothing after).  OSError when a file cannot be read."""
    seen: set[str] = set()

    def header(match) -> str:
        name = match.group(1)
        if name in seen:
            return ""
        seen.add(name)
        return _SYSTEM_INCLUDE.sub("", (folder / name).read_text())

    return "\n".join(_INCLUDE.sub(header, (folder / name).read_text()) for name in ("_common.cl", f"{family}.cl"))


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


# -- the structs the programs share with the host -----------------------------------------------
@functools.cache
def _headers(folder: Path):
    """A cffi FFI declaring the structs of every header in `folder`, as the host lays
    them out (the programs get MLRT_MAX_RANK as a build option, cffi as a #define)."""
    texts = [path.read_text() for path in sorted(folder.glob("*.h"))]
    return _lib.declarations("\n".join([f"#define MLRT_MAX_RANK {MAX_RANK}", *texts]))


def struct_bytes(struct_name: str, **fields) -> np.ndarray:
    """The bytes of struct `struct_name` of the programs' headers, its fields set by name
    (the rest zero; a sequence fills the start of an array field), for a kernel that
    reads it through a pointer."""
    value = _lib.struct_value(struct_name, fields, _headers(source_dir()))
    return value.reshape(1).view(np.uint8)


# -- the cache on disk --------------------------------------------------------------------------
def cache_dir() -> Path:
    env = os.environ.get("MLRT_OPENCL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlrt" / "opencl"


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


def program_job(identity: str, key: str, source: str, options: str, probe: bool = False) -> "_compiler.Job":
    """A program for one device and driver, with its place in the cache."""
    digest = hashlib.sha256("\0".join([identity, options, source]).encode()).hexdigest()
    return _compiler.Job(key, source, options, writable_cache() / f"{key.split(':')[0]}-{digest[:32]}.bin", probe)


def probe_job(identity: str) -> "_compiler.Job":
    return program_job(identity, "probe", _compiler.PROBE_SOURCE, "", probe=True)


# -- one device's programs ----------------------------------------------------------------------
class DevicePrograms:
    """The programs of a Device (_device.Device, which calls this __init__ once its context
    is made): each family's program per element type, loaded from the cache or built
    first in a child process, and those found broken."""

    def __init__(self):
        self._programs: dict[str, object] = {}
        self._lock = threading.RLock()
        self._broken: dict[str, str] = {}  # programs found broken in this process: key -> why
        self.source_builds = 0  # programs this process had built from source (in child processes)
        self.identity = _compiler.identity(self.cl_device)
        # Float division and sqrt as the CPU kernels compute them (IEEE, correctly
        # rounded), where the device can: OpenCL lets a compiler use 2.5-ulp division and
        # 3-ulp sqrt by default, and NVIDIA's does, so a LayerNormalization over a
        # constant row of 300 ones got a mean of 0.99999994 (seen on an H100).
        self.exact_div_sqrt = bool(int(self.cl_device.single_fp_config)
                                   & int(cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT))

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
        try:
            source = program_source(source_dir(), family)
        except OSError as exc:
            raise DeviceError(f"OpenCL kernels for '{family}' cannot be read: {exc}") from None
        options = [f"-DMLRT_{tname}=1", f"-DMLRT_MAX_RANK={MAX_RANK}"]
        options += [f"-D{name}={int(value)}" for name, value in family_options(family).items()]
        if self.exact_div_sqrt:
            options.append("-cl-fp32-correctly-rounded-divide-sqrt")
        return program_job(self.identity, f"{family}:{tname}", source, " ".join(options))

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
