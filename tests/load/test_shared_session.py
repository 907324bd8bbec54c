"""A short slice of tests/load/shared_session.py: threads sharing one session get exactly
the single-threaded results, on the CPU provider and on OpenCL."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mlrt.lowlevel as ml  # noqa: E402
from opencl_check import opencl_device  # noqa: E402
from shared_session import LIGHT, PROVIDERS, hammer  # noqa: E402


@pytest.mark.parametrize("provider", ["cpu", "opencl"])
def test_threads_share_one_session(provider):
    if provider == "opencl":
        opencl_device()
    session = ml.InferenceSession(str(LIGHT / "light_squeezenet.onnx"), providers=PROVIDERS[provider])
    s = hammer(session, threads=8, runs=6)
    assert s["errors"] == []
    assert s["runs"] == 48 and s["mismatches"] == 0, s
