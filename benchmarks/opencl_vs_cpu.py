"""The OpenCL provider vs the CPU provider on the nine "light" model graphs.

    python benchmarks/opencl_vs_cpu.py [--runs 5] [--models a,b] [--startup]

Each model gets two sessions in one process -- providers ["OpenCLExecutionProvider",
"CPUExecutionProvider"] and ["CPUExecutionProvider"] -- timed interleaved on the same
all-ones input.  Prints per-model medians, the ratio OpenCL/CPU (below 1 means the
OpenCL provider is faster), the share of nodes placed on OpenCL, and the largest
difference between the two outputs.  On a CPU OpenCL device (Intel's runtime from
pip, or PoCL) this measures the provider's overhead and kernel quality, not a GPU.

--startup also times session creation in fresh processes: the first with empty
program caches (mlrt's MLRT_OPENCL_CACHE, where it builds every float program in a
child process, and PoCL's own), the second with mlrt's cache kept and PoCL's emptied
again, and prints the ratio first/second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
OPENCL = ["OpenCLExecutionProvider", "CPUExecutionProvider"]


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_model(path: Path, runs: int) -> tuple[float, float, float, float]:
    gpu = ml.InferenceSession(str(path), providers=OPENCL)
    cpu = ml.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inp = cpu.get_inputs()[0]
    feed = {inp.name: np.ones([d if isinstance(d, int) and d > 0 else 1 for d in inp.shape], np.float32)}
    a, b = gpu.run(None, feed)[0], cpu.run(None, feed)[0]  # first runs plan (and JIT on PoCL)
    rows = [r for r in gpu.get_node_assignment() if not r[1].startswith("Memcpy")]
    share = sum(r[2] == OPENCL[0] for r in rows) / len(rows)
    t_gpu, t_cpu = [], []
    for _ in range(runs):
        t_gpu.append(_timed(lambda: gpu.run(None, feed)))
        t_cpu.append(_timed(lambda: cpu.run(None, feed)))
    return statistics.median(t_gpu), statistics.median(t_cpu), share, float(np.max(np.abs(a - b)))


_START = r"""
import json, sys, time
import mlrt.lowlevel as ml
from mlrt.native.opencl._device import default_device
default_device()
t = time.perf_counter()
ml.InferenceSession(sys.argv[1], providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
print(json.dumps({"seconds": time.perf_counter() - t, "builds": default_device().source_builds}))
"""


def startup(path: Path) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        def one(pocl: str) -> dict:
            env = dict(os.environ, MLRT_OPENCL_CACHE=f"{tmp}/mlrt", POCL_CACHE_DIR=f"{tmp}/{pocl}")
            out = subprocess.run([sys.executable, "-c", _START, str(path)], env=env, capture_output=True, text=True,
                                 check=True)
            return json.loads(out.stdout.strip().splitlines()[-1])
        return one("pocl-first"), one("pocl-second")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--models", default="", help="comma-separated names (default: all nine)")
    ap.add_argument("--startup", action="store_true", help="also time first and second session creation")
    args = ap.parse_args(argv)
    names = [n for n in args.models.split(",") if n] or [p.stem[6:] for p in sorted(LIGHT.glob("light_*.onnx"))]
    print(f"{'model':<14}{'opencl ms':>11}{'cpu ms':>10}{'ratio':>8}{'on opencl':>11}{'max |diff|':>12}"
          + ("   first s  second s  ratio" if args.startup else "") + f"   ({args.runs} runs)")
    ratios, starts = [], []
    for name in names:
        g, c, share, diff = bench_model(LIGHT / f"light_{name}.onnx", args.runs)
        ratios.append(g / c)
        line = f"{name:<14}{g * 1e3:>11.1f}{c * 1e3:>10.1f}{g / c:>8.2f}{share:>10.0%}{diff:>12.2e}"
        if args.startup:
            first, second = startup(LIGHT / f"light_{name}.onnx")
            starts.append(first["seconds"] / second["seconds"])
            line += (f"{first['seconds']:>10.2f}{second['seconds']:>10.2f}{starts[-1]:>7.1f}"
                     f"  ({first['builds']} builds, then {second['builds']})")
        print(line, flush=True)
    print(f"geometric mean ratio OpenCL/CPU: {float(np.exp(np.mean(np.log(ratios)))):.2f}")
    if starts:
        print(f"session creation, first/second process: min {min(starts):.1f}x, "
              f"geometric mean {float(np.exp(np.mean(np.log(starts)))):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
