"""Mutated conformance models and inputs never crash the process and always fail
with an MlrtError subclass (run in a child process, so a crash is a test failure,
not a dead test run)."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_mutated_cases_fail_cleanly():
    run = subprocess.run([sys.executable, str(HERE / "mutate_cases.py"), "--cases", "300", "--seed", "7"],
                         capture_output=True, text=True, timeout=600)
    last = run.stderr.strip().splitlines()[-1:] if run.stderr else []
    assert run.returncode == 0, f"fuzzer died (exit {run.returncode}) at {last}: {run.stderr[-2000:]}"
    assert "fuzz: 300 mutated cases" in run.stdout, run.stdout
    assert "non-MlrtError exceptions" not in run.stdout, run.stdout


def test_mutated_cases_with_the_opencl_provider_fail_cleanly():
    """The same with the OpenCL provider first: its recorders and kernels meet the
    hostile shapes, attributes and indices too (PoCL runs them in this process)."""
    from opencl_check import opencl_device
    opencl_device()
    run = subprocess.run([sys.executable, str(HERE / "mutate_cases.py"), "--cases", "300", "--seed", "11",
                          "--providers", "OpenCLExecutionProvider"], capture_output=True, text=True, timeout=600)
    last = run.stderr.strip().splitlines()[-1:] if run.stderr else []
    assert run.returncode == 0, f"fuzzer died (exit {run.returncode}) at {last}: {run.stderr[-2000:]}"
    assert "fuzz: 300 mutated cases" in run.stdout, run.stdout
    assert "non-MlrtError exceptions" not in run.stdout, run.stdout
