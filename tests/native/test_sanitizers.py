"""The C runtime under AddressSanitizer and UndefinedBehaviorSanitizer.

native/_build.py builds the library with `MLRT_SANITIZE=address,undefined`; this test
builds such a runtime into a temporary runtime folder (a copy of the bundled one) and
runs, in a child process that loads it (MLRT_RUNTIME, the sanitizer runtimes preloaded),
the C kernel tests, the CPU node conformance cases and a slice of the mutation fuzzer.
Any sanitizer report ends that child with its exit code and fails this test with the
report.  Skipped, saying why, where the C compiler has no sanitizer runtimes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mlrt
import mlrt.distribution as distribution
from mlrt.native import _build

TESTS = Path(__file__).resolve().parents[1]
SANITIZERS = "address,undefined"
CHILD_TESTS = ["tests/native/ops", "tests/conformance/test_node_conformance.py"]


@pytest.fixture(scope="module")
def sanitized_runtime(tmp_path_factory) -> tuple[Path, dict]:
    env = _build.sanitizer_env(SANITIZERS)
    if not env:
        pytest.skip(f"the C compiler ({os.environ.get('CC') or 'cc'}) has no AddressSanitizer / "
                    "UndefinedBehaviorSanitizer runtime installed")
    folder = distribution.bundle(tmp_path_factory.mktemp("asan") / "runtime")
    _build.build(folder, version=mlrt.__version__, jobs=os.cpu_count() or 2, sanitize=SANITIZERS)
    assert _build.built_sanitizers(folder / _build.LIBRARY) == SANITIZERS
    return folder, dict(os.environ, **env, MLRT_RUNTIME=str(folder))


def _reports(text: str) -> str:
    lines = [ln for ln in text.splitlines()
             if "AddressSanitizer" in ln or "runtime error:" in ln or "UndefinedBehaviorSanitizer" in ln]
    return "\n".join(lines[:20])


def test_kernel_tests_clean_under_sanitizers(sanitized_runtime):
    folder, env = sanitized_runtime
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *CHILD_TESTS],
                         cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=1500)
    out = run.stdout + run.stderr
    assert not _reports(out), _reports(out) + "\n" + out[-3000:]
    assert run.returncode == 0, out[-3000:]
    assert " passed" in out.splitlines()[-1], out[-500:]


def test_fuzzing_slice_clean_under_sanitizers(sanitized_runtime):
    folder, env = sanitized_runtime
    run = subprocess.run([sys.executable, str(TESTS / "fuzz" / "mutate_cases.py"), "--cases", "300", "--seed", "23"],
                         cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    assert not _reports(out), _reports(out) + "\n" + out[-3000:]
    assert run.returncode == 0, out[-3000:]
    assert "fuzz: 300 mutated cases" in run.stdout, run.stdout[-2000:]
