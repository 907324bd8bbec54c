"""samples/opencl_provider.py runs and reports the OpenCL placement and a match with the CPU."""

import subprocess
import sys
from pathlib import Path

from opencl_check import opencl_device

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "opencl_provider.py"


def test_opencl_sample_runs():
    opencl_device()
    out = subprocess.run([sys.executable, str(SAMPLE), "--frames", "2"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("squeezenet: ") and lines[0].endswith("nodes on OpenCLExecutionProvider"), lines[0]
    (diff,) = [ln for ln in lines if ln.startswith("max |OpenCL - CPU| on the last frame: ")]
    assert float(diff.rsplit(" ", 1)[1]) < 1e-5, diff
