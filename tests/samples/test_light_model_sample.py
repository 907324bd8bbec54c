"""samples/light_model.py classifies the bundled picture through the high-level API."""

import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "light_model.py"


def test_light_model_sample_runs():
    out = subprocess.run([sys.executable, str(SAMPLE), "--runs", "2"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("model light_squeezenet: input data_0 [1, 3, 224, 224]"), lines[0]
    assert lines[1] == "crop used: (40, 0, 240, 240) (x, y, width, height)"  # the 320x240 picture's centre square
    assert sum(ln.startswith(f"  {k}. class ") for ln in lines for k in range(1, 6)) == 5
    assert lines[-1].startswith("latency: median ")
