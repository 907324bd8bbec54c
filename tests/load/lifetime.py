"""Memory over a session's lifetime (issue 14's lifetime check): RSS growth over many
create / run / destroy cycles, and over many runs of one session.

    python tests/load/lifetime.py [--cycles 1000] [--runs 10000] [--model squeezenet]
                                  [--provider cpu|opencl|both] [--limit-mb 5]

The first 10% of the cycles (and of the runs) are a warm-up, not counted: caches,
arenas, the OpenCL program cache and the allocator's free lists settle there.  RSS is
read from /proc/self/status (VmRSS).  Prints one line per measure; exit status 1 when
any growth is over --limit-mb.  tests/load/test_lifetime.py runs a short slice in CI.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np
import onnx

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
PROVIDERS = {"cpu": ["CPUExecutionProvider"], "opencl": ["OpenCLExecutionProvider", "CPUExecutionProvider"]}


def rss_bytes() -> int:
    """This process's resident set size (VmRSS of /proc/self/status), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def model_path(name: str) -> str:
    return str(LIGHT / f"light_{name}.onnx")


def _feed(session: ml.InferenceSession) -> dict:
    inp = session.get_inputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in inp.shape]
    return {inp.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}


def _measure(step, n: int, warmup: int) -> dict:
    """Run `step(i)` for i < n; RSS after the warm-up and at the end (after a collection)."""
    for i in range(warmup):
        step(i)
    gc.collect()
    start = rss_bytes()
    peak = start
    t0 = time.perf_counter()
    for i in range(warmup, n):
        step(i)
        if i % 64 == 0:
            peak = max(peak, rss_bytes())
    gc.collect()
    end = rss_bytes()
    return {"counted": n - warmup, "start": start, "end": end, "growth": end - start,
            "peak": max(peak, end), "seconds": time.perf_counter() - t0}


def cycles(model: str, providers: list[str], n: int, warmup: int | None = None) -> dict:
    """RSS growth over `n` cycles of create a session, run it once, drop it."""
    first = ml.InferenceSession(model, providers=providers)
    feed = _feed(first)
    (expected,) = first.run(None, feed)[:1]
    del first
    bad = []

    def step(i):
        s = ml.InferenceSession(model, providers=providers)
        got = s.run(None, feed)[0]
        if not np.array_equal(got, expected):
            bad.append(i)
        del s

    out = _measure(step, n, max(1, n // 10) if warmup is None else warmup)
    out["mismatches"] = len(bad)
    return out


def runs(model: str, providers: list[str], n: int, warmup: int | None = None) -> dict:
    """RSS growth over `n` runs of one session."""
    session = ml.InferenceSession(model, providers=providers)
    feed = _feed(session)
    expected = session.run(None, feed)[0]
    bad = []

    def step(i):
        if not np.array_equal(session.run(None, feed)[0], expected):
            bad.append(i)

    out = _measure(step, n, max(1, n // 10) if warmup is None else warmup)
    out["mismatches"] = len(bad)
    out["providers"] = session.get_providers()
    return out


def _line(name: str, what: str, s: dict) -> str:
    mb = 1 << 20
    return (f"{name}: RSS growth over {s['counted']} {what}: {s['growth'] / mb:+.2f} MB "
            f"({s['start'] / mb:.1f} -> {s['end'] / mb:.1f} MB, peak {s['peak'] / mb:.1f} MB, "
            f"{s['mismatches']} wrong results, {s['seconds']:.1f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=1000, help="create / run / destroy cycles (0: skip)")
    ap.add_argument("--runs", type=int, default=10000, help="runs of one session (0: skip)")
    ap.add_argument("--model", default="squeezenet", help="a light model name (onnx/backend/test/data/light)")
    ap.add_argument("--provider", choices=["cpu", "opencl", "both"], default="both")
    ap.add_argument("--limit-mb", type=float, default=5.0, help="the most RSS growth allowed per measure")
    args = ap.parse_args(argv)
    model = model_path(args.model)
    bad = 0
    for name in (["cpu", "opencl"] if args.provider == "both" else [args.provider]):
        probe = ml.InferenceSession(model, providers=PROVIDERS[name])
        if name == "opencl" and "OpenCLExecutionProvider" not in probe.get_providers():
            print(f"opencl: no OpenCL device, not run ({'/'.join(probe.get_providers())})")
            bad += 1
            continue
        del probe
        for what, n, fn in (("cycles", args.cycles, cycles), ("runs", args.runs, runs)):
            if n <= 0:
                continue
            s = fn(model, PROVIDERS[name], n)
            print(_line(name, f"{what} of {args.model} (after {n - s['counted']} warm-up)", s), flush=True)
            if s["growth"] > args.limit_mb * (1 << 20) or s["mismatches"]:
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
