"""Build libmlrt_core.so from native/src and native/kernels.

Used by the package build (setup.py) and by hand while developing:

    python native/_build.py [--out DIR]

The library links OpenBLAS from the scipy-openblas32 wheel; the BLAS library is
copied beside libmlrt_core.so and found through an $ORIGIN rpath, so the runtime
folder is self-contained.  File names and the rpath token are the platform's
(distribution/platforms.py: libmlrt_core.dylib and @loader_path on macOS, mlrt_core.dll
and no rpath on Windows).  Flags are portable (no -march=native); faster per-ISA code
is chosen at run time.  CC may name the compiler with arguments ("python -m ziglang cc
-target x86_64-linux-gnu.2.28"); building with no compiler ends in one line saying
what to install.

Objects are cached, keyed by the source, the headers, the flags and the compiler
(its path and --version), under DIR/.obj and in a cache shared by every build:
$MLRT_BUILD_CACHE, default $XDG_CACHE_HOME/mlrt/build or ~/.cache/mlrt/build
(MLRT_BUILD_CACHE=0 or off: DIR/.obj only); the library linked from a set of objects
is cached beside them, keyed by those objects, the BLAS and the linker.  So a rebuild
after editing one kernel compiles one file and links, and one with nothing changed
neither compiles nor links, here or in `pip install .`, which builds in a fresh
temporary folder every time.  The build says on stderr how far it is and how long it took
(`pip install -v .` shows it).

Sanitizers: `MLRT_SANITIZE=address,undefined` (or `--sanitize address,undefined`)
builds with those -fsanitize checks, -O1 -g and no recovery from undefined behaviour
(the first report ends the process).  A Python process loads such a library only with
the sanitizer runtimes preloaded first (`sanitizer_preload`); tests/native/
test_sanitizers.py builds one into a runtime folder and runs the kernel tests and a
fuzzing slice on it.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _platform_names():
    """This platform's file names (distribution/platforms.py), loaded by its path: the
    build imports nothing of mlrt (setup.py runs it before mlrt is installed).  The
    folder beside native/ is distribution/ in a checkout and mlrt/distribution/ installed."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("mlrt_build_platforms", HERE.parent / "distribution" / "platforms.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks its module up there)
    spec.loader.exec_module(module)
    return module.host_names()


NAMES = _platform_names()
LIBRARY = NAMES.library
# (-Wno-unknown-warning-option: clang's name for silence about gcc's -Wno-format-truncation,
# which gcc in turn accepts unknown, as every -Wno- option it does not know)
CFLAGS = ["-std=c11", "-O3", "-fPIC", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-format-truncation",
          "-Wno-unknown-warning-option", "-Werror=implicit-function-declaration", "-fno-math-errno", "-pthread"]


SANITIZERS = ("address", "undefined")


def sanitize_flags(spec: str | None) -> list[str]:
    """Compile and link flags for MLRT_SANITIZE's comma-separated sanitizers ([] if none)."""
    names = [n.strip() for n in (spec or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in SANITIZERS]
    if unknown:
        raise SystemExit(f"MLRT_SANITIZE: unknown sanitizer(s) {', '.join(unknown)}; choose from {', '.join(SANITIZERS)}")
    if not names:
        return []
    flags = [f"-fsanitize={','.join(names)}", "-fno-omit-frame-pointer", "-g", "-O1"]
    if "undefined" in names:
        flags.append("-fno-sanitize-recover=undefined")
    return flags


def sanitizer_preload(spec: str, cc: str | None = None) -> list[str]:
    """The sanitizer runtime libraries a process must preload (LD_PRELOAD) to load a
    library built with `spec`; [] when the compiler has none of them installed."""
    cmd = compiler(cc)
    wanted = {"address": "libasan.so", "undefined": "libubsan.so"}
    found = []
    for name in [n.strip() for n in spec.split(",") if n.strip()]:
        try:
            path = subprocess.run([*cmd, f"-print-file-name={wanted[name]}"], capture_output=True,
                                  text=True).stdout.strip()
        except OSError:  # no compiler at all
            return []
        if not os.path.isabs(path) or not os.path.exists(path):
            return []
        found.append(path)
    return found


def sanitizer_env(spec: str, cc: str | None = None) -> dict[str, str]:
    """Environment for a Python process that loads a library built with `spec`: its
    sanitizer runtimes preloaded, leak checking off (the interpreter keeps objects to
    its exit by design), reports with stacks.  {} if the runtimes are not installed."""
    preload = sanitizer_preload(spec, cc)
    if not preload:
        return {}
    return {"LD_PRELOAD": " ".join(preload + [os.environ.get("LD_PRELOAD", "")]).strip(),
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=86",
            "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87"}


def built_sanitizers(lib_path: Path) -> str:
    """The sanitizers a built library calls into ("address,undefined", or "")."""
    data = Path(lib_path).read_bytes()
    return ",".join(n for n, mark in (("address", b"__asan_init"), ("undefined", b"__ubsan_handle_")) if mark in data)


def sources() -> list[Path]:
    return sorted((HERE / "src").glob("*.c")) + sorted((HERE / "kernels").glob("*.c"))


def headers() -> list[Path]:
    return sorted((HERE / "include").glob("*.h")) + sorted((HERE / "src").glob("*.h")) + sorted((HERE / "kernels").glob("*.h"))


def _blas():
    """The OpenBLAS the library links: its headers' folder, its library's folder and name;
    the scipy-openblas32 package's, or in a cross build MLRT_BLAS_DIR's."""
    folder = os.environ.get("MLRT_BLAS_DIR")
    if folder:
        root = Path(folder)
        if not (root / "lib").is_dir() or not (root / "include" / "cblas.h").is_file():
            raise BuildError(f"mlrt: MLRT_BLAS_DIR={folder} is not an unpacked scipy_openblas32 folder "
                             "(lib/ and include/cblas.h)")
        return root / "include", root / "lib", "scipy_openblas"
    import scipy_openblas32 as sob
    return Path(sob.get_include_dir()), Path(sob.get_lib_dir()), sob.get_library()


# --- the compiler -----------------------------------------------------------------------

class BuildError(Exception):
    """A build that cannot go on, said in one line.  setup.py hands it to setuptools,
    which prints it as the build's last line ("error: ..."), below the compiler's own
    messages, where a pip user looks first."""


MISSING_COMPILER_HELP = ("install one (Debian/Ubuntu: apt-get install gcc; Fedora: dnf install gcc; "
                         "macOS: xcode-select --install; Windows: MinGW-w64's gcc on PATH) "
                         "or install a prebuilt mlrt wheel")


def compiler(cc: str | None = None) -> list[str]:
    """The C compiler command: `cc`, else $CC, else the platform's ("cc"; MinGW-w64's
    "gcc" on Windows), split as a shell would, so that CC may carry arguments
    (CC="python -m ziglang cc -target x86_64-linux-gnu.2.28")."""
    return shlex.split(cc or os.environ.get("CC") or "") or [NAMES.compiler]


def require_compiler(cmd: list[str]) -> str:
    """The resolved path of the compiler's program; a BuildError naming what to install
    when there is none (checked before the build starts, so that is all it says)."""
    found = shutil.which(cmd[0])
    if found is None:
        named = f"{cmd[0]!r} (from $CC)" if cmd == compiler() and os.environ.get("CC") else repr(cmd[0])
        raise BuildError(f"mlrt: building from source needs a C compiler, and {named} was not found: "
                         + MISSING_COMPILER_HELP)
    return found


def compiler_identity(cmd: list[str]) -> str:
    """What names this compiler in an object's cache key: the command with its program
    resolved (a symlink such as /usr/bin/cc followed), and its `--version` output, which
    changes when the compiler is upgraded in place or CC names another one."""
    program = os.path.realpath(require_compiler(cmd))
    try:
        run = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=120)
        version = f"{run.returncode}\n{run.stdout}{run.stderr}"
    except (OSError, subprocess.SubprocessError) as exc:
        version = f"no version ({exc})"
    return "\0".join([program, *cmd[1:], version])


# --- the manylinux link -------------------------------------------------------------------
# A wheel's library is linked by `zig cc` (the ziglang package) against glibc 2.28's
# symbols, so that it loads on every Linux onnxruntime's manylinux_2_28 wheels load on,
# whatever glibc built it; the compiling stays with the system's compiler, which the
# kernels are tuned with (clang's code was measured ~45% slower).

MANYLINUX_GLIBC = "2.28"
ZIGLANG = "ziglang>=0.13"


def arch() -> str:
    """The CPU the library is built for: this machine's, or MLRT_TARGET_ARCH's in a cross
    build (below)."""
    import platform
    host = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    return os.environ.get("MLRT_TARGET_ARCH") or host


# --- a cross build -------------------------------------------------------------------
# A Linux library for another CPU (an aarch64 wheel built on x86-64): MLRT_TARGET_ARCH
# names the CPU, CC its cross compiler (aarch64-linux-gnu-gcc), MLRT_BLAS_DIR the target's
# OpenBLAS (the scipy-openblas32 wheel of that platform, unpacked: its scipy_openblas32
# folder), and MLRT_TARGET_PYTHON the command that runs a Python of the target (an
# emulator's: "qemu-aarch64 -L ROOT ROOT/usr/bin/python3"), which reads the built
# library's kernel table for the manifest.  `zig cc` links it for manylinux_2_28 as for a
# native build; the wheel is tagged for the target.


def cross_build() -> bool:
    return bool(os.environ.get("MLRT_TARGET_ARCH"))


def manylinux_linker() -> str | None:
    """The `zig cc` command that links for manylinux_2_28, on x86-64 and aarch64 Linux
    where neither CC nor MLRT_LINK_CC chose the tools (a cross build's CC is its
    compiler: it still links with zig); else None."""
    if sys.platform != "linux" or arch() not in ("x86_64", "aarch64"):
        return None
    if (os.environ.get("CC") and not cross_build()) or os.environ.get("MLRT_LINK_CC"):
        return None
    return f"{shlex.quote(sys.executable)} -m ziglang cc -target {arch()}-linux-gnu.{MANYLINUX_GLIBC}"


def can_link_manylinux(version: str) -> bool:
    """Whether a build can give a manylinux library now: ziglang is installed, or the
    library it would link is in the build cache already."""
    import importlib.util
    linker = manylinux_linker()
    return linker is not None and (importlib.util.find_spec("ziglang") is not None
                                   or cached_library(version, linker) is not None)


# --- the object cache -------------------------------------------------------------------
# pip builds in a fresh temporary folder every time, so DIR/.obj never survives from one
# `pip install .` to the next.  Objects are kept as well in the user's cache folder,
# keyed by the source, every header the compiler can reach, the flags and the compiler,
# so that an install with no C change compiles nothing.  The key's flags name an -I
# folder by its headers' content, not its path: pip's isolated build environment (and
# with it the BLAS header folder) has a new path every time.

CACHE_KEEP = 6  # objects kept per source file: the most recently used (a few flag sets and compilers)
_CACHE_OFF = ("0", "off")


def build_cache() -> Path | None:
    """The shared object cache folder: $MLRT_BUILD_CACHE, else $XDG_CACHE_HOME/mlrt/build,
    else ~/.cache/mlrt/build; None when MLRT_BUILD_CACHE is 0 or off, or when the folder
    cannot be written (said in one line: the build goes on without it)."""
    value = os.environ.get("MLRT_BUILD_CACHE", "").strip()
    if value.lower() in _CACHE_OFF:
        return None
    if value:
        folder = Path(value).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = Path(base) / "mlrt" / "build"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        _say(f"mlrt: the build cache {folder} cannot be written ({exc.strerror or exc}); compiling without it")
        return None
    return folder


def _say(line: str) -> None:
    """A progress line: stderr, flushed at once (pip -v shows a build's output as it comes)."""
    print(line, file=sys.stderr, flush=True)


def _headers_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*.h")):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _key_inputs(cmd: list[str], flags: list[str], header_files: list[Path]) -> bytes:
    """Everything but the source that an object depends on, computed once per build."""
    key_flags = [f"-I<{_headers_digest(Path(f[2:]))}>" if f.startswith("-I") and Path(f[2:]).is_dir() else f
                 for f in flags]
    h = hashlib.sha256()
    for path in header_files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return "\0".join([compiler_identity(cmd), *key_flags, h.hexdigest()]).encode()


def object_names(cmd: list[str], srcs: list[Path], flags: list[str], header_files=()) -> list[str]:
    """Each source's object name: its file name and the digest of its cache key."""
    key_inputs = _key_inputs(cmd, flags, list(header_files))
    return [_object_name(src, key_inputs) for src in srcs]


def _object_name(src: Path, key_inputs: bytes) -> str:
    # the folder is part of the name: src/gemm.c and kernels/gemm.c are two files
    digest = hashlib.sha256(key_inputs + b"\0" + src.read_bytes()).hexdigest()[:20]
    return f"{src.parent.name}.{src.stem}-{digest}.o"


def _copy_atomically(source: Path, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _ObjectCache:
    """The shared cache folder's objects (none when `folder` is None).  Writes are a
    temporary file renamed into place, so concurrent builds never read half an object;
    a cache that fails to be written is dropped for the rest of the build (one line).
    Used from the thread that collects the compiles only."""

    def __init__(self, folder: Path | None):
        self.folder = folder

    def fetch(self, name: str, target: Path) -> bool:
        if self.folder is None:
            return False
        entry = self.folder / name
        try:
            _copy_atomically(entry, target)
            os.utime(entry)  # recently used: kept by prune()
        except FileNotFoundError:
            return False  # (or pruned by another build meanwhile)
        except OSError:
            return target.exists()
        return True

    def store(self, obj: Path, name: str) -> None:
        folder = self.folder
        if folder is None:
            return
        try:
            _copy_atomically(obj, folder / name)
            self._prune(folder, name)
        except OSError as exc:
            self.folder = None
            _say(f"mlrt: the build cache {folder} cannot be written ({exc.strerror or exc}); compiling without it")

    @staticmethod
    def _prune(folder: Path, name: str) -> None:
        """Keep the CACHE_KEEP most recently used entries of this source file (or library)."""
        prefix, tail = name.rsplit("-", 1)
        suffix = tail[20:]
        pattern = re.compile(re.escape(prefix) + r"-[0-9a-f]{20}" + re.escape(suffix))
        entries = []
        for path in folder.glob(f"{glob.escape(prefix)}-*{glob.escape(suffix)}"):
            try:
                if pattern.fullmatch(path.name):
                    entries.append((path.stat().st_mtime, path))
            except FileNotFoundError:
                pass
        for _, path in sorted(entries, reverse=True)[CACHE_KEEP:]:
            path.unlink(missing_ok=True)


class CompileStats:
    """How many files a compile step had, compiled, and found compiled (in DIR/.obj or
    the shared cache).  (Not a dataclass: setup.py loads this file as a module that is
    not in sys.modules, where dataclasses cannot resolve its annotations.)"""

    def __init__(self, total: int = 0, compiled: int = 0, cached: int = 0):
        self.total, self.compiled, self.cached = total, compiled, cached

    def __repr__(self) -> str:
        return f"CompileStats(total={self.total}, compiled={self.compiled}, cached={self.cached})"


def compile_objects(cmd: list[str], srcs: list[Path], obj_dir: Path, flags: list[str], *,
                    header_files: list[Path] = (), cache: Path | None = None, jobs: int = 2,
                    label: str = "C core") -> tuple[list[Path], CompileStats]:
    """Compile srcs into obj_dir (objects in the order of srcs), reusing an object of the
    same key from obj_dir or from the shared `cache` folder; progress lines on stderr.
    The key: the source, `header_files` and every header under an -I folder, the
    flags and the compiler's identity.  A failing file ends the build with a BuildError
    naming it (the compiler's messages printed above)."""
    obj_dir.mkdir(parents=True, exist_ok=True)
    store = _ObjectCache(cache)
    objs, missing = [], []
    for src, name in zip(srcs, object_names(cmd, srcs, flags, header_files)):
        obj = obj_dir / name
        objs.append(obj)
        if not obj.exists() and not store.fetch(name, obj):
            missing.append((src, obj))
    stats = CompileStats(total=len(srcs), cached=len(srcs) - len(missing))
    _say(f"mlrt: compiling {label}: {len(missing)} of {len(srcs)} files to compile ({stats.cached} from cache)")
    if not missing:
        return objs, stats
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = {pool.submit(_compile, cmd, src, obj, flags): (src, obj) for src, obj in missing}
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
                src, obj = futures[future]
                store.store(obj, obj.name)
                stats.compiled += 1
                _say(f"mlrt: compiling {label}: {stats.compiled}/{len(missing)} files"
                     + (f" ({stats.cached} more from cache)" if stats.cached else "")
                     + f": {src.parent.name}/{src.name}")
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return objs, stats


def _compile(cmd: list[str], src: Path, obj: Path, flags: list[str]) -> None:
    tmp = obj.with_name(f".{obj.name}.{os.getpid()}.tmp")
    try:
        run = subprocess.run([*cmd, *flags, "-c", str(src), "-o", str(tmp)], capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"mlrt: compiling {src.parent.name}/{src.name}: cannot run {cmd[0]!r} ({exc})") from None
    if run.stdout or run.stderr:  # (in one piece: files compile side by side)
        sys.stderr.write(run.stdout + run.stderr)
        sys.stderr.flush()
    if run.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"mlrt: compiling {src.parent.name}/{src.name} failed (exit status {run.returncode}); "
                         "the compiler's messages are above")
    os.replace(tmp, obj)


# --- the library --------------------------------------------------------------------------

def build(out_dir: Path, version: str = "0.0.0", cc: str | None = None, jobs: int = 2,
          sanitize: str | None = None, link_cc: str | None = None) -> Path:
    """Compile and link the runtime into out_dir; return the library path.  `cc` (default
    $CC, else the platform's: cc, or gcc on Windows): the compiler command, arguments allowed.  `link_cc` (default
    $MLRT_LINK_CC, else the compiler): the command that links, e.g. setup.py's `zig cc`
    against an older glibc's symbols for a manylinux wheel; the compiler's own runtime
    library (libgcc: the helpers gcc calls for what the CPU lacks) is then linked in statically.
    `sanitize` (default $MLRT_SANITIZE): sanitizers to build with, e.g.
    "address,undefined".  Objects come from out_dir/.obj or the shared build cache
    (`build_cache()`) when their key matches, and so does the library linked from them:
    a build with nothing changed neither compiles nor links.

    Builds into one folder are serialised with a lock file, so two builds started
    together never leave a library missing the newer of their sources."""
    plan = _Plan(version, cc, sanitize, link_cc)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / ".build.lock", "w") as lock:
        lock_exclusively(lock)
        return _build_locked(out_dir, plan, jobs)


def lock_exclusively(lock) -> None:
    """Wait until this process holds the lock on the open file `lock`, until it is
    closed: fcntl.flock on POSIX; msvcrt.locking of its first byte where there is no
    fcntl (Windows), whose blocking mode gives up after ten tries a second apart, so
    it is asked again until the lock is had."""
    try:
        import fcntl
    except ImportError:
        import msvcrt
        while True:
            lock.seek(0)
            try:
                msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)
                return
            except OSError:
                continue
    fcntl.flock(lock, fcntl.LOCK_EX)


class _Plan:
    """What a build compiles and links, and the cache names of its objects and library,
    worked out without compiling anything."""

    def __init__(self, version: str, cc: str | None, sanitize: str | None, link_cc: str | None):
        self.version = version
        if cross_build() and not (cc or os.environ.get("CC")):
            raise BuildError(f"mlrt: a cross build for {arch()} (MLRT_TARGET_ARCH) needs CC naming its cross "
                             f"compiler, e.g. CC={arch()}-linux-gnu-gcc")
        self.cmd = compiler(cc)
        require_compiler(self.cmd)  # first: with no compiler, that is the one line the build says
        self.extra = sanitize_flags(os.environ.get("MLRT_SANITIZE") if sanitize is None else sanitize)
        self.link = shlex.split(link_cc or os.environ.get("MLRT_LINK_CC") or "") or self.cmd
        self.blas_inc, self.blas_lib_dir, self.blas_name = _blas()
        self.flags = CFLAGS + self.extra + [f"-I{HERE / 'include'}", f"-I{HERE / 'src'}", f"-I{self.blas_inc}",
                                            f'-DMLRT_VERSION_STRING="{version}"',
                                            f'-DMLRT_BUILD_FLAGS="{" ".join(CFLAGS + self.extra)}"']
        self.sources = sources()
        self.objects = object_names(self.cmd, self.sources, self.flags, headers())

    @property
    def blas_file(self) -> str:
        return NAMES.blas_file(self.blas_name)

    def library_name(self) -> str:
        """The linked library's name in the build cache: keyed by its objects (each named by
        its own key), the BLAS it links, the extra flags and the linker.  A `python -m
        ziglang cc ...` linker is named without its Python, which is another one in every
        isolated build environment (and the zig release: setup_backend.py asks whether
        this library is cached before ziglang is installed)."""
        link = self.link
        if link[1:3] == ["-m", "ziglang"]:
            linker = " ".join(["ziglang", *link[3:]])
        else:
            linker = compiler_identity(link)
        h = hashlib.sha256("\0".join([*self.objects, self.blas_file, sha256_file(self.blas_lib_dir / self.blas_file),
                                       *self.extra, linker]).encode())
        return f"link.{LIBRARY.removesuffix(NAMES.suffix)}-{h.hexdigest()[:20]}{NAMES.suffix}"


def cached_library(version: str, link_cc: str | None = None, cc: str | None = None,
                   sanitize: str | None = None) -> Path | None:
    """The library a build with these settings would link, where the shared build cache
    holds it already (so that build needs neither to compile nor to link); else None."""
    folder = build_cache()
    if folder is None:
        return None
    try:
        path = folder / _Plan(version, cc, sanitize, link_cc).library_name()
    except (BuildError, ImportError, OSError):  # no compiler or BLAS: the build itself will say so
        return None
    return path if path.is_file() else None


def link_command(link: list[str], names, output: Path, objects, blas_dir: Path, blas_name: str,
                 extra=()) -> list[str]:
    """The command linking `objects` into the core library `output` for the platform of
    `names` (distribution/platforms.py): against the BLAS `blas_name` in `blas_dir`, with
    the platform's rpath to its own folder and its threads flags; `extra`: sanitizer flags,
    the compiler's runtime library.  The CI's Windows cross-build links the DLL it tests
    under wine with this same command."""
    rpath = [f"-Wl,-rpath,{names.rpath}"] if names.rpath else []
    return [*link, "-shared", "-o", str(output), *map(str, objects), f"-L{blas_dir}", f"-l{blas_name}", *rpath,
            "-lm", *extra, *names.threads]


def _build_locked(out_dir: Path, plan: _Plan, jobs: int) -> Path:
    start = time.monotonic()
    tmp_blas = out_dir / f".{plan.blas_file}.{os.getpid()}.tmp"
    shutil.copy2(plan.blas_lib_dir / plan.blas_file, tmp_blas)
    os.replace(tmp_blas, out_dir / plan.blas_file)
    target = out_dir / LIBRARY
    tmp = out_dir / f".{LIBRARY}.{os.getpid()}.tmp"
    cache = _ObjectCache(build_cache())
    library = plan.library_name()
    if cache.fetch(library, tmp):
        os.replace(tmp, target)
        write_manifest(out_dir, plan.version)
        _say(f"mlrt: built {LIBRARY} in {time.monotonic() - start:.1f} s (nothing changed: the library "
             f"linked from these {len(plan.objects)} objects before, from the build cache)")
        return target
    objs, stats = compile_objects(plan.cmd, plan.sources, out_dir / ".obj", plan.flags, header_files=headers(),
                                  cache=cache.folder, jobs=jobs)
    runtime = []
    if plan.link != plan.cmd:
        runtime = [subprocess.run([*plan.cmd, "-print-libgcc-file-name"], capture_output=True, text=True,
                                  check=True).stdout.strip()]
    run = subprocess.run(link_command(plan.link, NAMES, tmp, objs, out_dir, plan.blas_name, [*plan.extra, *runtime]))
    if run.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"mlrt: linking {LIBRARY} failed (exit status {run.returncode}); "
                         "the linker's messages are above")
    os.replace(tmp, target)
    cache.store(target, library)
    write_manifest(out_dir, plan.version)
    _say(f"mlrt: built {LIBRARY} in {time.monotonic() - start:.1f} s "
         f"({stats.compiled} files compiled, {stats.cached} from cache)")
    return target


# --- the runtime folder's manifest -------------------------------------------------
# A runtime folder holds libmlrt_core.so, the BLAS beside it, include/mlrt.h, the
# kernels' parameter headers (kernels/*.h, read by cffi), the files providers ship
# (their RUNTIME_FILES: the OpenCL provider's kernel sources) and manifest.json, which
# names the version, ABI number, opset range per domain, providers, build flags and
# the sha256 of every other file.  mlrt.distribution checks it before dlopen.

MANIFEST = "manifest.json"


def runtime_files(folder: Path) -> list[str]:
    """The files of a runtime folder (relative, '/'-separated), manifest excluded."""
    names = NAMES.library_files(folder)
    names += ["include/" + p.name for p in sorted((folder / "include").glob("*.h"))]
    names += ["kernels/" + p.name for p in sorted((folder / "kernels").glob("*.h"))]
    for _, patterns in provider_declarations(folder):
        names += [p.relative_to(folder).as_posix() for pattern in patterns for p in sorted(folder.glob(pattern))]
    return names


def provider_declarations(folder: Path) -> list[tuple[str, tuple]]:
    """(name, RUNTIME_FILES) of every provider module in folder/providers, read from its
    source with ast (building imports nothing of mlrt): a provider class's `name` and
    the globs of the files it ships in a runtime folder besides the library."""
    found = []
    for path in sorted((folder / "providers").glob("[!_]*.py")):
        names, files = [], ()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["RUNTIME_FILES"]:
                files = tuple(ast.literal_eval(node.value))
            if isinstance(node, ast.ClassDef):
                names += [ast.literal_eval(a.value) for a in node.body if isinstance(a, ast.Assign)
                          and [getattr(t, "id", None) for t in a.targets] == ["name"]]
        found += [(name, files) for name in names]
    return found


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _library_facts(lib_path: Path) -> dict:
    """ABI number, build info and the opset range per domain, read from the built
    library through ctypes (in a child process, so the build never keeps it mapped)."""
    code = r"""
import ctypes, json, sys
class K(ctypes.Structure):
    _fields_ = [("op_type", ctypes.c_char_p), ("domain", ctypes.c_char_p), ("since", ctypes.c_int32),
                ("until", ctypes.c_int32), ("mask", ctypes.c_uint64), ("run", ctypes.c_void_p)]
L = ctypes.CDLL(sys.argv[1])
L.mlrt_kernel_get.restype = ctypes.POINTER(K)
L.mlrt_build_info.restype = L.mlrt_version.restype = ctypes.c_char_p
opsets = {}
for i in range(L.mlrt_kernel_count()):
    k = L.mlrt_kernel_get(i).contents
    dom = k.domain.decode() or "ai.onnx"
    lo, hi = opsets.get(dom, (k.since, k.since))
    top = k.since if k.until >= 2**31 - 1 else k.until
    opsets[dom] = (min(lo, k.since), max(hi, top))
print(json.dumps({"abi": L.mlrt_abi_version(), "build": L.mlrt_build_info().decode(),
                  "library_version": L.mlrt_version().decode(),
                  "opsets": {d: {"min": a, "max": b} for d, (a, b) in sorted(opsets.items())}}))
"""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    built_with = built_sanitizers(lib_path)
    if built_with:  # (its sanitizer runtimes must be loaded before it)
        env.update(sanitizer_env(built_with))
    python = [sys.executable]
    if cross_build():  # the target's Python reads it (see "a cross build")
        python = shlex.split(os.environ.get("MLRT_TARGET_PYTHON", ""))
        if not python:
            raise BuildError(f"mlrt: a cross build for {arch()} needs MLRT_TARGET_PYTHON, a command running "
                             "a Python of the target (an emulator's), to read the library's kernel table")
        for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE"):  # (the build environment's, not its)
            env.pop(name, None)
    run = subprocess.run([*python, "-c", code, str(lib_path)], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        raise BuildError(f"mlrt: the built {lib_path.name} cannot be loaded to read its kernel table: "
                         f"{(run.stderr.strip().splitlines() or ['exit status %d' % run.returncode])[-1]}")
    return json.loads(run.stdout)


def manifest_for(folder: Path, version: str, facts: dict | None = None) -> dict:
    facts = facts or _library_facts(folder / LIBRARY)
    return {
        "name": "mlrt",
        "version": version,
        "abi": facts["abi"],
        # per domain: the lowest opset any kernel starts at, and the highest opset
        # any kernel is (re)defined at -- newer opsets of an operator may need a
        # newer runtime
        "opsets": facts["opsets"],
        # the providers whose shipped files are all present
        "providers": [name for name, patterns in provider_declarations(folder)
                      if all(any(folder.glob(pattern)) for pattern in patterns)],
        "build": facts["build"],
        "files": {name: sha256_file(folder / name) for name in runtime_files(folder)},
    }


def write_manifest(folder: Path, version: str, facts: dict | None = None) -> Path:
    """Write folder/manifest.json (atomically) for the runtime in folder."""
    data = manifest_for(folder, version, facts)
    target = folder / MANIFEST
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, target)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE, help="folder for the library (default: native/)")
    ap.add_argument("--version", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--sanitize", default=None, help="e.g. address,undefined (default: $MLRT_SANITIZE)")
    args = ap.parse_args(argv)
    version = args.version or _project_version()
    try:
        print(build(args.out, version=version, jobs=args.jobs, sanitize=args.sanitize))
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(args.out / MANIFEST)
    return 0


def _project_version() -> str:
    """The checkout's version, or the installed package's when run from an install."""
    import tomllib
    project = HERE.parent / "pyproject.toml"
    if not project.is_file():
        from importlib.metadata import version
        return version("mlrt")
    with open(project, "rb") as f:
        return tomllib.load(f)["project"]["version"]


if __name__ == "__main__":
    sys.exit(main())
