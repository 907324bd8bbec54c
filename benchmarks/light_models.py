"""mlrt vs onnxruntime on the nine "light" model graphs, side by side.

    python benchmarks/light_models.py [--runs 20] [--threads N] [--models a,b]

Both runtimes load each model in one process and are timed interleaved (mlrt run,
onnxruntime run, mlrt run, ...) on the same all-ones input, so machine noise hits
both alike.  onnxruntime's thread spinning is turned off: its idle workers would
otherwise spin on the cores during mlrt's runs.  Prints per-model medians and the ratio mlrt/onnxruntime (below 1 means
mlrt is faster).  Quote ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import onnx

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_model(path: Path, runs: int, threads: int, ort_spinning: bool = False) -> tuple[float, float, float]:
    import onnxruntime as ort

    so = ml.SessionOptions()
    so.intra_op_num_threads = threads
    mine = ml.InferenceSession(str(path), so)
    oso = ort.SessionOptions()
    oso.intra_op_num_threads = threads
    oso.log_severity_level = 3  # no warnings about unused initializers in the old models
    # onnxruntime's workers spin for a long while after each run; interleaved with mlrt in
    # one process that spinning takes the cores mlrt is running on.  Off, so each runtime
    # gets the machine to itself during its own runs.
    if not ort_spinning:
        oso.add_session_config_entry("session.intra_op.allow_spinning", "0")
    theirs = ort.InferenceSession(str(path), oso, providers=["CPUExecutionProvider"])
    inp = mine.get_inputs()[0]
    x = np.ones([d if isinstance(d, int) and d > 0 else 1 for d in inp.shape], np.float32)
    feed = {inp.name: x}
    a = mine.run(None, feed)[0]
    b = theirs.run(None, feed)[0]
    max_diff = float(np.max(np.abs(a - b)))
    t_mine, t_theirs = [], []
    for _ in range(runs):
        t_mine.append(_timed(lambda: mine.run(None, feed)))
        t_theirs.append(_timed(lambda: theirs.run(None, feed)))
    return statistics.median(t_mine), statistics.median(t_theirs), max_diff


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--models", default="", help="comma-separated names (default: all nine)")
    ap.add_argument("--ort-spinning", action="store_true", help="leave onnxruntime's thread spinning on (its default)")
    args = ap.parse_args(argv)
    names = [n for n in args.models.split(",") if n] or [p.stem[6:] for p in sorted(LIGHT.glob("light_*.onnx"))]
    print(f"{'model':<14}{'mlrt ms':>10}{'ort ms':>10}{'ratio':>8}{'max |diff|':>12}   ({args.runs} runs, {args.threads} threads)")
    ratios = []
    for name in names:
        m, o, diff = bench_model(LIGHT / f"light_{name}.onnx", args.runs, args.threads, args.ort_spinning)
        ratios.append(m / o)
        print(f"{name:<14}{m * 1e3:>10.2f}{o * 1e3:>10.2f}{m / o:>8.2f}{diff:>12.2e}", flush=True)
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geometric mean ratio mlrt/onnxruntime: {geo:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
