"""Many threads calling run() on one shared session (issue 14's load check).

    python tests/load/shared_session.py [--threads 16] [--runs 200] [--model squeezenet]
                                        [--provider cpu|opencl|both]

Each thread runs the session `runs` times on inputs drawn from a small fixed set, and
every output must equal, bit for bit, what one thread alone got for that input first.
Prints one line per provider; exit status 1 on any difference or error.
tests/load/test_shared_session.py runs a short slice of this in CI.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
PROVIDERS = {"cpu": ["CPUExecutionProvider"], "opencl": ["OpenCLExecutionProvider", "CPUExecutionProvider"]}


def hammer(session: ml.InferenceSession, threads: int, runs: int, n_inputs: int = 4) -> dict:
    """Run `session` from `threads` threads, `runs` times each; a summary dict with the
    number of runs whose outputs differed from the single-threaded reference."""
    inp = session.get_inputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in inp.shape]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(n_inputs)]
    reference = [session.run(None, {inp.name: x}) for x in inputs]
    mismatches, errors, done = [], [], [0] * threads
    start = threading.Barrier(threads)

    def worker(t: int) -> None:
        start.wait()
        for r in range(runs):
            k = (t + r) % n_inputs
            try:
                got = session.run(None, {inp.name: inputs[k]})
            except Exception as exc:  # noqa: BLE001 -- every failure is counted and reported
                errors.append(f"thread {t} run {r}: {type(exc).__name__}: {exc}")
                continue
            if any(not np.array_equal(g, e, equal_nan=True) for g, e in zip(got, reference[k])):
                mismatches.append((t, r))
            done[t] += 1

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return {"runs": sum(done), "mismatches": len(mismatches), "errors": errors,
            "seconds": time.perf_counter() - t0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--model", default="squeezenet", help="a light model name (onnx/backend/test/data/light)")
    ap.add_argument("--provider", choices=["cpu", "opencl", "both"], default="both")
    args = ap.parse_args(argv)
    model = str(LIGHT / f"light_{args.model}.onnx")
    bad = 0
    for name in (["cpu", "opencl"] if args.provider == "both" else [args.provider]):
        session = ml.InferenceSession(model, providers=PROVIDERS[name])
        where = "/".join(session.get_providers())
        if name == "opencl" and "OpenCLExecutionProvider" not in session.get_providers():
            print(f"opencl: no OpenCL device, not run ({where})")
            bad += 1
            continue
        s = hammer(session, args.threads, args.runs)
        print(f"{name} ({where}): {args.threads} threads x {args.runs} runs of {args.model}: "
              f"{s['runs']} runs, {s['mismatches']} differ from the single-threaded result, "
              f"{len(s['errors'])} errors, {s['seconds']:.1f} s")
        for e in s["errors"][:5]:
            print("   ", e)
        bad += s["mismatches"] + len(s["errors"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
