"""Import cost: `import mlrt.lowlevel` / `import mlrt.highlevel` against `import onnxruntime`.

    python benchmarks/import_time.py [--runs 5] [--cli] [--no-bytecode]

Each sample is a fresh interpreter (`python -c "import X"`), timed from start to exit
on the wall clock, so it is what an app or a command line pays before its first line
of work: interpreter start, site, and the import.  The targets are timed interleaved
(one of each, then the next round, each round in a rotated order) so machine noise
hits all alike.  "python (nothing)" is the interpreter alone, for scale; --cli adds
`python -m mlrt --help`.  Prints median, min and max seconds and the ratio of medians
to onnxruntime's (at or below 1: mlrt imports no slower).  Quote ratios, not absolute
times.  `python -X importtime -c "import mlrt.highlevel"` shows where the time goes.

Bytecode: an installed package imports compiled bytecode (pip compiles it at install),
while an editable install under PYTHONDONTWRITEBYTECODE=1 (as in this repository's dev
environment) compiles every mlrt module from source at every import, a cost onnxruntime
and numpy, installed, never pay.  So by default the children share a fresh bytecode
cache (PYTHONPYCACHEPREFIX in a temporary folder, filled by an untimed first run of
each target, nothing written into the source tree): every target imports as installed.
--no-bytecode times them under the environment as it is instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS = {
    "python (nothing)": ["-c", "pass"],
    "onnxruntime": ["-c", "import onnxruntime"],
    "mlrt.lowlevel": ["-c", "import mlrt.lowlevel"],
    "mlrt.media": ["-c", "import mlrt.media"],
    "mlrt.highlevel": ["-c", "import mlrt.highlevel"],
}
CLI = {"mlrt --help": ["-m", "mlrt", "--help"]}


def sample(args: list[str], env: dict) -> float:
    """Seconds one fresh interpreter takes to run `args` and exit."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per target (default 5)")
    ap.add_argument("--cli", action="store_true", help="also time `python -m mlrt --help`")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="no shared bytecode cache: the environment as it is (PYTHONDONTWRITEBYTECODE included)")
    args = ap.parse_args(argv)
    targets = {**TARGETS, **(CLI if args.cli else {})}
    names = list(targets)
    with tempfile.TemporaryDirectory(prefix="mlrt-import-time-") as cache:
        env = dict(os.environ)
        if not args.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = cache
        for name in names:  # once each first: bytecode cached, files in the page cache for every timed run
            sample(targets[name], env)
        times: dict[str, list[float]] = {name: [] for name in names}
        for r in range(args.runs):
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(sample(targets[name], env))
    ort = statistics.median(times["onnxruntime"])
    how = "environment as it is" if args.no_bytecode else "bytecode cached"
    print(f"{'import':<18}{'median s':>10}{'min s':>8}{'max s':>8}{'/ ort':>8}   "
          f"({args.runs} fresh processes each, interleaved, {how}; {sys.executable})")
    for name in names:
        t = times[name]
        med = statistics.median(t)
        print(f"{name:<18}{med:>10.3f}{min(t):>8.3f}{max(t):>8.3f}{med / ort:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
