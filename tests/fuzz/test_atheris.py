"""A bounded slice of the atheris harness (about 20 s in all per provider): mutated
models and mutated feeds end in a result or an MlrtError, never a crash, a hang or
another exception.  The slice is a fixed number of executions from fixed seeds, so it
runs the same cases on every machine (a time limit would not); `python
tests/fuzz/run_fuzz.py` runs the same for as long as you like."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris", reason="atheris (the test extra; Linux x86_64, Python < 3.14) is not installed")

HERE = Path(__file__).resolve().parent
RUNS = {"models": 3000, "inputs": 6000}


@pytest.mark.parametrize("provider", ["cpu", "opencl"])
@pytest.mark.parametrize("mode", ["models", "inputs"])
def test_atheris_slice(mode, provider, tmp_path):
    if provider == "opencl":
        from opencl_check import opencl_device
        opencl_device()
    run = subprocess.run([sys.executable, str(HERE / "run_fuzz.py"), "--mode", mode, "--provider", provider,
                          "--runs", str(RUNS[mode]), "--artifacts", str(tmp_path / "found"),
                          "--corpus", str(tmp_path / "corpus")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    line = next(x for x in run.stdout.splitlines() if x.startswith(f"fuzz {mode} {provider}:"))
    executions = int(line.split(":")[1].split()[0])
    assert ", 0 crashes, 0 hangs" in line, line
    assert executions == RUNS[mode], line
