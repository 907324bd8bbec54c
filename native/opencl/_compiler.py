"""OpenCL programs built in a child process, so a driver's compiler can never take the
user's process down.

OpenCL compilers are third-party code that can abort (PoCL 3.0's LLVM 14 does, on CPUs
newer than itself) or hang.  The first time a device + driver + source + options is
seen, a child process -- this file run as a script, importing nothing of mlrt --
builds the programs and writes their binaries into the cache; the parent then loads
them with clCreateProgramWithBinary.  A program whose build fails, crashes the child
or runs past the time limit gets a `.broken` verdict file beside where its binary
would be, holding the reason (the compiler's last lines); later sessions read the
verdict instead of trying again.  Deleting the cache folder forgets every verdict.

Protocol: the parent writes one JSON request on the child's stdin: the device's
identity string and a list of jobs {key, source, options, path, probe}; the child
answers one JSON line per event on stdout: {"start": key}, then {"done": key} or
{"error": key, "log": text}.  A child that dies, or stays on one job too long, is
replaced by a new one for the jobs it had not finished; the job it was on is the
broken one.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_PROBE_KERNEL = "mlrt_probe"
PROBE_SOURCE = "__kernel void mlrt_probe(__global float *x) { x[get_global_id(0)] *= 2.0f; }"

# The child's command line; a test replaces it to inject a compiler that crashes or hangs.
CHILD = [sys.executable, "-P", str(Path(__file__).resolve())]  # -P: the script folder is not on sys.path


def identity(cl_device) -> str:
    """The device + driver string that program binaries are keyed on (parent and child)."""
    return "|".join([cl_device.name, cl_device.platform.name, cl_device.platform.version,
                     cl_device.driver_version, cl_device.version])


def write_atomic(path: str, data: bytes) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


# -- the parent --------------------------------------------------------------------------------------
@dataclass
class Job:
    """One program to build: `key` names it in messages ("conv:float32"), `path` is where
    its binary goes; its verdict, if it is broken, goes beside it."""

    key: str
    source: str
    options: str
    path: Path
    probe: bool = False

    @property
    def verdict_path(self) -> Path:
        return self.path.with_suffix(".broken")

    def verdict(self) -> str | None:
        """Why this program is known to be broken on this device and driver, or None."""
        try:
            return json.loads(self.verdict_path.read_text())["reason"]
        except FileNotFoundError:
            return None
        except Exception:
            return "unreadable verdict file " + str(self.verdict_path)


def verdicts(folder: Path, device_identity: str) -> dict[str, str]:
    """The programs marked broken for one device in a cache folder: key -> reason."""
    out = {}
    for path in sorted(folder.glob("*.broken")):
        try:
            v = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if v.get("device") == device_identity:
            out[v.get("program", path.stem)] = v.get("reason", "")
    return out


def time_limit() -> float:
    """Seconds one program may take to build before its compiler counts as hung."""
    try:
        return max(float(os.environ.get("MLRT_OPENCL_BUILD_TIMEOUT", "300")), 1.0)
    except ValueError:
        return 300.0


MAX_CHILDREN = 4  # compilers are single-threaded, and PoCL's takes up to 2 GB each


def build(device_identity: str, jobs: list[Job]) -> dict[str, str]:
    """Build `jobs` in child processes (binaries into each job's path), up to one child
    per core at once; returns {key: reason} for the ones that are broken, whose
    verdicts are then on disk."""
    children = max(1, min(len(jobs), os.cpu_count() or 1, MAX_CHILDREN))
    if children == 1:
        return _build_in_turn(device_identity, jobs)
    from concurrent.futures import ThreadPoolExecutor
    shares = [jobs[i::children] for i in range(children)]
    with ThreadPoolExecutor(children) as pool:
        parts = list(pool.map(lambda share: _build_in_turn(device_identity, share), shares))
    return {key: why for part in parts for key, why in part.items()}


def _build_in_turn(device_identity: str, jobs: list[Job]) -> dict[str, str]:
    """build() for one child at a time: a child that dies is replaced for the rest."""
    broken: dict[str, str] = {}
    by_key = {j.key: j for j in jobs}
    todo = list(jobs)
    while todo:
        finished, reason, blamed = _one_child(device_identity, todo)
        found = {k: v for k, v in finished.items() if v is not None}
        if reason is not None:
            found.update(dict.fromkeys(blamed, reason))
            finished.update(dict.fromkeys(blamed))
        left = [j for j in todo if j.key not in finished]
        if len(left) == len(todo):  # no progress (a child answering nonsense): no more tries
            found.update(dict.fromkeys((j.key for j in left), reason or "the build process answered nothing usable"))
            left = []
        for key, why in found.items():  # kept at once: a parent killed later keeps what was learnt
            verdict = {"program": key, "reason": why, "device": device_identity}
            try:
                write_atomic(str(by_key[key].verdict_path), json.dumps(verdict).encode())
            except (OSError, KeyError):
                pass  # an unwritable cache only means trying again next session
        broken.update(found)
        todo = left
    return broken


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _one_child(device_identity: str, jobs: list[Job]):
    """Run one child over `jobs`: ({key: None or build log} for the jobs it finished,
    the reason it stopped early or None, the keys that reason falls on)."""
    request = {"device": device_identity,
               "jobs": [{"key": j.key, "source": j.source, "options": j.options, "path": str(j.path),
                         "probe": j.probe} for j in jobs]}
    limit = time_limit()
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(CHILD, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        except OSError as exc:
            return {}, f"cannot start the build process ({exc})", [j.key for j in jobs]
        lines: queue.Queue = queue.Queue()
        helpers = [threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True),
                   threading.Thread(target=_feed, args=(proc.stdin, json.dumps(request).encode()), daemon=True)]
        for t in helpers:
            t.start()
        finished: dict[str, str | None] = {}
        current, reason = None, None
        deadline = time.monotonic() + limit
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                proc.kill()
                proc.wait()
                reason = f"the compiler did not finish within {limit:g} s (MLRT_OPENCL_BUILD_TIMEOUT)"
                break
            if line is None:
                try:
                    code = proc.wait(timeout=limit)
                except subprocess.TimeoutExpired:  # closed its output but lingers
                    proc.kill()
                    code = proc.wait()
                if any(j.key not in finished for j in jobs):
                    reason = f"the build process died ({_exit_text(code)})" if code else \
                        "the build process ended without finishing"
                break
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a driver writing on stdout
            if not isinstance(event, dict):
                continue
            if "start" in event:
                current, deadline = event["start"], time.monotonic() + limit
            elif "done" in event or "error" in event:
                key = event.get("done", event.get("error"))
                finished[key] = event.get("log") or (None if "done" in event else "the build failed")
                current = None
        for t in helpers:  # the child is gone: its pipes end, and so do these
            t.join(timeout=10)
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        if reason is None:
            return finished, None, []
        err.seek(0)
        said = [ln.strip() for ln in err.read().decode(errors="replace").splitlines() if ln.strip()]
        tail = said[-6:]
        first_error = next((ln for ln in said if "error" in ln.lower()), None)
        if first_error is not None and first_error not in tail:  # LLVM names the failure first, then dumps
            tail = [first_error, "..."] + tail
        last = f"; its last lines: {' | '.join(tail)}" if tail else ""
        if current is not None:
            return finished, f"{reason} while building {current}{last}", [current]
        rest = [j.key for j in jobs if j.key not in finished]
        # died before its first job: the device itself cannot be used
        return finished, f"{reason} before building anything{last}", rest if not finished else rest[:1]


def _feed(stream, data: bytes) -> None:
    """The request, written from a thread: a child that never reads cannot block us."""
    try:
        stream.write(data)
        stream.close()
    except OSError:
        pass  # it died first: the reader sees that


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


# -- the child --------------------------------------------------------------------------------------
def _find_device(cl, wanted: str):
    for platform in cl.get_platforms():
        try:
            devices = platform.get_devices()
        except Exception:
            continue
        for d in devices:
            if identity(d) == wanted:
                return d
    raise RuntimeError(f"the child process sees no OpenCL device {wanted.split('|')[0]!r}")


def _run_probe(cl, context, device, program) -> None:
    import numpy as np
    queue = cl.CommandQueue(context)
    buf = cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(4, np.float32))
    cl.Kernel(program, _PROBE_KERNEL)(queue, (4,), None, buf)
    out = np.empty(4, np.float32)
    cl.enqueue_copy(queue, out, buf)
    if not np.array_equal(out, np.full(4, 2, np.float32)):
        raise RuntimeError(f"the probe kernel computed {out.tolist()} instead of [2, 2, 2, 2]")


def _say(**event) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def child_main() -> int:
    import warnings
    os.environ["PYOPENCL_NO_CACHE"] = "1"  # the binaries go to mlrt's cache, not pyopencl's too
    import pyopencl as cl
    request = json.loads(sys.stdin.read())
    device = _find_device(cl, request["device"])
    context = cl.Context([device])
    for job in request["jobs"]:
        _say(start=job["key"])
        try:
            with warnings.catch_warnings():  # a non-empty build log is not an error
                warnings.simplefilter("ignore")
                program = cl.Program(context, job["source"]).build(options=job["options"])
                if job.get("probe"):
                    _run_probe(cl, context, device, program)
            write_atomic(job["path"], program.get_info(cl.program_info.BINARIES)[0])
        except Exception as exc:  # the compiler's own error: a verdict, not a crash
            _say(error=job["key"], log=str(exc).strip()[-4000:])
            continue
        _say(done=job["key"])
    return 0


if __name__ == "__main__":
    sys.exit(child_main())
