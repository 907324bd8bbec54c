"""mlrt vs onnxruntime on the kinds of models people deploy (benchmarks/models.py):
mobile CNNs, a YOLO-style detector, PP-OCRv4, recurrent and If-driven models, a
BERT-style encoder, int8 MobileNetV2 and ResNet-18 (QOperator, QDQ, dynamic) beside their
float models, byte-level classifiers of long sequences (1-D convolutions), scikit-learn
models, the nine light models, a one-Add graph and an app's eight small models called
in turn.

    python benchmarks/suite.py [--groups mobile,ocr] [--models yolo] [--runs 10] [--rounds 3]
                               [--pause 1] [--rss]

Per model, both runtimes with their default options, batch 1, same inputs:
- outputs compared (largest difference, relative to the largest output value);
- session creation: median of 3 alternating creations from bytes;
- latency in blocks: `rounds` times a block of mlrt runs, a pause, a block of as many
  onnxruntime runs (default SessionOptions: its workers spin), a pause -- medians; a
  block is `runs` runs, or more where that takes under 50 ms (up to 1000), and a model
  under a millisecond takes 7 rounds;
- latency interleaved (one mlrt run, one onnxruntime run, ...) with onnxruntime's
  spinning off, so neither takes the cores from the other; medians;
- with --rss, peak RSS of a fresh process that creates the session and runs it.
Prints ratios mlrt/onnxruntime (below 1: mlrt is faster) and their geometric means per
group and over the suite.  Quote ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import models  # noqa: E402

import mlrt.lowlevel as ml  # noqa: E402


def _ort():
    import onnxruntime as ort
    return ort


def _ort_session(data, spinning: bool = True):
    ort = _ort()
    so = ort.SessionOptions()
    if not spinning:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


class _Several:
    """Several sessions run one after the other as one (an app's small models per frame):
    a builder that returns a list of (model, feeds) is measured this way."""

    def __init__(self, make, data: list, feeds: list):
        self.sessions, self.feeds = [make(d) for d in data], feeds

    def run(self, _names, _feeds):
        return [out for s, f in zip(self.sessions, self.feeds) for out in s.run(None, f)]


def _session(make, data, feeds):
    return _Several(make, data, feeds) if isinstance(data, list) else make(data)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _difference(a: list, b: list) -> float:
    worst = 0.0
    for x, y in zip(a, b):
        if np.asarray(x).dtype.kind in "OUS":  # string labels: equal or not
            worst = max(worst, 0.0 if np.array_equal(np.asarray(x), np.asarray(y)) else float("inf"))
            continue
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y))) / max(float(np.max(np.abs(x))), 1e-30))
    return worst


_RSS_CHILD = r"""
import resource, sys, pickle
data, feeds, which = pickle.load(open(sys.argv[1], "rb"))
if which == "mlrt":
    import mlrt.lowlevel as ml
    make = ml.InferenceSession
else:
    import onnxruntime as ort
    make = lambda d: ort.InferenceSession(d, providers=["CPUExecutionProvider"])
pairs = list(zip(data, feeds)) if isinstance(data, list) else [(data, feeds)]
sessions = [(make(d), f) for d, f in pairs]
for _ in range(5):
    for s, f in sessions:
        s.run(None, f)
# VmHWM: this process image's own peak (ru_maxrss would carry over the forking parent's across exec)
with open("/proc/self/status") as f:
    hwm = [int(line.split()[1]) for line in f if line.startswith("VmHWM:")]
print(hwm[0] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss(data, feeds, which: str) -> float:
    """Peak RSS (MB) of a fresh process that imports the runtime, creates and runs the session."""
    import pickle
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
        pickle.dump((data, feeds, which), f)
    try:
        out = subprocess.run([sys.executable, "-c", _RSS_CHILD, f.name], capture_output=True, text=True, check=True)
    finally:
        Path(f.name).unlink()
    return int(out.stdout.split()[-1]) / 1024


BLOCK_SECONDS = 0.05
FAST_ROUNDS = 7


def bench(data, feeds, runs: int, rounds: int, pause: float, rss: bool) -> dict:
    mine = _session(ml.InferenceSession, data, feeds)
    theirs = _session(_ort_session, data, feeds)
    quiet = _session(lambda d: _ort_session(d, spinning=False), data, feeds)
    r = {"diff": _difference(theirs.run(None, feeds), mine.run(None, feeds))}
    mine.run(None, feeds)
    quiet.run(None, feeds)
    create_m, create_o = [], []
    for _ in range(3):
        create_m.append(_timed(lambda: _session(ml.InferenceSession, data, feeds)))
        create_o.append(_timed(lambda: _session(_ort_session, data, feeds)))
    r["create"] = (statistics.median(create_m), statistics.median(create_o))
    # a block lasts at least BLOCK_SECONDS (a model of tens of microseconds: hundreds of
    # runs, so one hiccup of the host is not a tenth of the block), the same count for both
    each = max(_timed(lambda: mine.run(None, feeds)), _timed(lambda: theirs.run(None, feeds)), 1e-6)
    runs = max(runs, min(int(BLOCK_SECONDS / each), 1000))
    # a model under a millisecond takes more rounds (up to FAST_ROUNDS): its blocks are a
    # few milliseconds, so a neighbour's burst on the shared host can cover a whole block
    if each < 1e-3:
        rounds = max(rounds, FAST_ROUNDS)
    blocks_m, blocks_o = [], []
    for _ in range(rounds):
        blocks_m += [_timed(lambda: mine.run(None, feeds)) for _ in range(runs)]
        time.sleep(pause)
        blocks_o += [_timed(lambda: theirs.run(None, feeds)) for _ in range(runs)]
        time.sleep(pause)
    r["blocks"] = (statistics.median(blocks_m), statistics.median(blocks_o))
    inter_m, inter_o = [], []
    for _ in range(rounds * runs):
        inter_m.append(_timed(lambda: mine.run(None, feeds)))
        inter_o.append(_timed(lambda: quiet.run(None, feeds)))
    r["interleaved"] = (statistics.median(inter_m), statistics.median(inter_o))
    if rss:
        r["rss"] = (peak_rss(data, feeds, "mlrt"), peak_rss(data, feeds, "ort"))
    return r


def _bytes(model):
    return model if isinstance(model, str) else model.SerializeToString()


def _geomean(values) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", default="", help="comma-separated groups (default: all)")
    ap.add_argument("--models", default="", help="only models whose name contains one of these (comma-separated)")
    ap.add_argument("--runs", type=int, default=10, help="runs per block, at least (more for fast models: 50 ms a block)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between blocks")
    ap.add_argument("--rss", action="store_true", help="also measure peak RSS in fresh processes (slow)")
    args = ap.parse_args(argv)
    groups = [g for g in args.groups.split(",") if g] or None
    wanted = [m for m in args.models.split(",") if m]
    header = (f"{'model':<26}{'latency ms':>11}{'blocks':>8}{'interl.':>8}{'create ms':>11}{'ratio':>7}"
              + (f"{'RSS MB':>8}{'ratio':>7}" if args.rss else "") + f"{'rel diff':>10}")
    totals = {"blocks": [], "interleaved": [], "create": [], "rss": []}
    for group, table in models.suite(groups).items():
        rows = {k: [] for k in totals}
        print(f"\n[{group}]\n{header}")
        if not table:
            print("  (nothing to run: for scikit-learn models, pip install scikit-learn skl2onnx)")
            continue
        for name, build in table.items():
            if wanted and not any(w in name for w in wanted):
                continue
            built = build()
            if isinstance(built, list):  # several models run in turn as one entry
                data, feeds = [_bytes(m) for m, _ in built], [f for _, f in built]
            else:
                data, feeds = _bytes(built[0]), built[1]
            r = bench(data, feeds, args.runs, args.rounds, args.pause, args.rss)
            ratios = {k: r[k][0] / r[k][1] for k in ("blocks", "interleaved", "create") + (("rss",) if args.rss else ())}
            for k, v in ratios.items():
                rows[k].append(v)
                totals[k].append(v)
            line = (f"{name:<26}{r['blocks'][0] * 1e3:>11.3f}{ratios['blocks']:>8.2f}{ratios['interleaved']:>8.2f}"
                    f"{r['create'][0] * 1e3:>11.1f}{ratios['create']:>7.2f}")
            if args.rss:
                line += f"{r['rss'][0]:>8.0f}{ratios['rss']:>7.2f}"
            print(line + f"{r['diff']:>10.1e}", flush=True)
        if rows["blocks"]:
            print(f"{'geomean':<26}{'':>11}{_geomean(rows['blocks']):>8.2f}{_geomean(rows['interleaved']):>8.2f}"
                  f"{'':>11}{_geomean(rows['create']):>7.2f}" + (f"{'':>8}{_geomean(rows['rss']):>7.2f}" if args.rss else ""))
    if totals["blocks"]:
        print(f"\nsuite ({len(totals['blocks'])} models), mlrt/onnxruntime geomeans: latency in blocks "
              f"{_geomean(totals['blocks']):.2f} (worst {max(totals['blocks']):.2f}), interleaved without spinning "
              f"{_geomean(totals['interleaved']):.2f}, session creation {_geomean(totals['create']):.2f}"
              + (f", peak RSS {_geomean(totals['rss']):.2f}" if args.rss else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
