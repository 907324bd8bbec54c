"""Each optimizer pass measured on the suite's models: mlrt with every pass on against
mlrt with that one pass disabled (`disabled_optimizers`), interleaved in one process.

    python benchmarks/passes.py [--groups mobile,detector] [--models yolo] [--runs 20] [--rounds 5]

For every model and every pass that changes its optimized graph, prints the latency
ratio all-passes / without-the-pass (below 1: the pass makes the model faster) and
the geometric mean per pass.  A pass above 1 on some model slows that model down.
Quote ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import models  # noqa: E402

import mlrt.lowlevel as ml  # noqa: E402
from mlrt.native import optimizer  # noqa: E402


def _pass_names() -> list[str]:
    return [p.__name__.rsplit(".", 1)[-1] for p in optimizer.passes()]


def _median_interleaved(sessions, feeds, runs: int, rounds: int) -> list[float]:
    times = [[] for _ in sessions]
    for _ in range(rounds):
        for k, s in enumerate(sessions):
            for _ in range(runs):
                t0 = time.perf_counter()
                s.run(None, feeds)
                times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", default="", help="comma-separated groups (default: all)")
    ap.add_argument("--models", default="", help="only models whose name contains one of these")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g] or None
    wanted = [m for m in args.models.split(",") if m]
    per_pass: dict[str, list[float]] = {}
    print(f"{'model':<26}{'pass':<24}{'nodes on':>9}{'off':>6}{'on/off':>8}")
    for group, table in models.suite(groups).items():
        for name, build in (table or {}).items():
            if wanted and not any(w in name for w in wanted):
                continue
            model, feeds = build()
            data = model if isinstance(model, str) else model.SerializeToString()
            full = ml.InferenceSession(data)
            full_nodes = full.get_node_assignment()
            for p in _pass_names():
                without = ml.InferenceSession(data, disabled_optimizers=[p])
                nodes = without.get_node_assignment()
                if nodes == full_nodes:
                    continue  # the pass does nothing to this model
                full.run(None, feeds)
                without.run(None, feeds)
                on, off = _median_interleaved([full, without], feeds, args.runs, args.rounds)
                per_pass.setdefault(p, []).append(on / off)
                print(f"{name:<26}{p:<24}{len(full_nodes):>9}{len(nodes):>6}{on / off:>8.2f}", flush=True)
    print("\ngeomean per pass (on/off; below 1: the pass helps):")
    for p, ratios in sorted(per_pass.items()):
        g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"  {p:<24}{g:>6.2f}  worst {max(ratios):.2f} over {len(ratios)} model(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
