"""Run the atheris harness for a number of executions or seconds, and count findings.

    python tests/fuzz/run_fuzz.py --mode models|inputs --provider cpu|opencl --runs N [--seconds S]

The harness (`fuzz_harness.py`) runs in a child process under libFuzzer; a finding
(an uncaught non-MlrtError exception, a native crash, a hang over --timeout seconds,
memory over --rss-mb) ends that child and leaves its input in --artifacts
(`crash-*`, `timeout-*`, `oom-*`); the runner then starts a new child for the runs
and time left, up to --max-findings.  A non-MlrtError exception does not end the
child: its input is written as `exception-*` (once per place it is raised from), its
traceback beside it in `exception-*.txt`, and it counts as a crash.  It prints

    fuzz <mode> <provider>: N executions, C crashes, H hangs[, O ooms]

and exits 1 on any finding.  The libFuzzer corpus is kept in --corpus (by default
tests/fuzz/corpus/<mode>-<provider>, ignored by git), so long runs build on earlier ones.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "fuzz_harness.py"
KINDS = {"crash-": "crashes", "timeout-": "hangs", "oom-": "ooms", "leak-": "crashes", "exception-": "crashes"}


def executions(output: str) -> int:
    """Executions of one libFuzzer child: its final stat, else 'Done N runs', else the last '#N' line."""
    for pattern in (r"stat::number_of_executed_units:\s*(\d+)", r"Done (\d+) runs", r"^#(\d+)\s"):
        found = re.findall(pattern, output, flags=re.M)
        if found:
            return int(found[-1])
    return 0


def run(mode: str, provider: str, runs: int, seconds: float | None, artifacts: Path, corpus: Path,
        timeout: int = 10, rss_mb: int = 4096, max_findings: int = 10, verbose: bool = False) -> dict:
    artifacts.mkdir(parents=True, exist_ok=True)
    corpus.mkdir(parents=True, exist_ok=True)
    counts = {"executions": 0, "crashes": 0, "hangs": 0, "ooms": 0}
    found: list[str] = []
    start = time.monotonic()
    seed = 1
    while counts["executions"] < runs:
        left_s = None if seconds is None else seconds - (time.monotonic() - start)
        if left_s is not None and left_s < 1:
            break
        before = set(os.listdir(artifacts))
        cmd = [sys.executable, str(HARNESS), "--mode", mode, "--provider", provider, "--keep-going", str(artifacts),
               f"-runs={runs - counts['executions']}", f"-timeout={timeout}", f"-rss_limit_mb={rss_mb}",
               f"-artifact_prefix={artifacts}{os.sep}", "-print_final_stats=1", f"-seed={seed}",
               "-max_len=512", "-len_control=0", str(corpus)]
        if left_s is not None:
            cmd.insert(-1, f"-max_total_time={max(1, int(left_s))}")
        seed += 1
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        out = proc.stdout + proc.stderr
        if verbose:
            print(out[-3000:], file=sys.stderr)
        counts["executions"] += executions(out)
        new = sorted(set(os.listdir(artifacts)) - before)
        new_findings = [n for n in new if any(n.startswith(k) for k in KINDS) and not n.endswith(".txt")]
        for name in new_findings:
            counts[next(v for k, v in KINDS.items() if name.startswith(k))] += 1
            found.append(str(artifacts / name))
        if proc.returncode != 0 and not new_findings:
            counts["crashes"] += 1  # died without an artifact: count it, show the end of its output
            found.append(f"(child exit {proc.returncode}, no artifact)")
        for name in new_findings:
            if name.startswith("exception-"):
                print(f"--- finding {name}:\n{(artifacts / (name + '.txt')).read_text()[-1500:]}---", file=sys.stderr)
        if proc.returncode != 0:
            tail = "\n".join(out.strip().splitlines()[-40:])
            print(f"--- finding ({', '.join(new_findings) or 'no artifact'}):\n{tail}\n---", file=sys.stderr)
            if len(found) >= max_findings:
                break
            continue
        break  # a clean child ran all it was given
    counts["findings"] = found
    counts["seconds"] = time.monotonic() - start
    return counts


def summary(mode: str, provider: str, counts: dict) -> str:
    line = f"fuzz {mode} {provider}: {counts['executions']} executions, {counts['crashes']} crashes, {counts['hangs']} hangs"
    if counts["ooms"]:
        line += f", {counts['ooms']} ooms"
    return line + f" ({counts['seconds']:.0f} s)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["models", "inputs"], required=True)
    ap.add_argument("--provider", choices=["cpu", "opencl"], default="cpu")
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long, runs done or not")
    ap.add_argument("--artifacts", type=Path, default=None,
                    help="where findings are written (default: a new tests/fuzz/artifacts/<mode>-<provider>-<time>)")
    ap.add_argument("--corpus", type=Path, default=None, help="libFuzzer corpus folder (kept between runs)")
    ap.add_argument("--timeout", type=int, default=10, help="seconds one case may take before it is a hang")
    ap.add_argument("--rss-mb", type=int, default=4096)
    ap.add_argument("--max-findings", type=int, default=10)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    artifacts = args.artifacts or HERE / "artifacts" / f"{args.mode}-{args.provider}-{time.strftime('%Y%m%d-%H%M%S')}"
    corpus = args.corpus or HERE / "corpus" / f"{args.mode}-{args.provider}"
    if args.provider == "opencl":
        sys.path.insert(0, str(HERE.parent.parent))
        from mlrt._errors import DeviceError
        from mlrt.native.opencl._device import default_device
        try:
            default_device()
        except DeviceError as exc:
            print(f"fuzz {args.mode} opencl: skipped, no usable OpenCL device: {exc}")
            return 0
    counts = run(args.mode, args.provider, args.runs, args.seconds, artifacts, corpus, args.timeout,
                 args.rss_mb, args.max_findings, args.verbose)
    print(summary(args.mode, args.provider, counts))
    for f in counts["findings"]:
        print(f"  finding: {f}")
    return 1 if counts["findings"] else 0


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        sys.exit(main())
