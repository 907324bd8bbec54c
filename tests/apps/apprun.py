"""Running an app script twice, on the real onnxruntime and on mlrt, and comparing.

Each app prints its results (class ids, labels, strings, boxes rounded to pixels) and
saves its float outputs with `np.savez` to the path given as its last argument. `run`
starts both children at once and returns what each printed and saved;
`AppRun.assert_matches` asks for identical printed lines and, for the saved arrays, equal
integers and strings and floats within rtol 1e-5 (atol 1e-6 for values near zero)
unless the test names a wider tolerance for an array and says why."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RTOL, ATOL = 1e-5, 1e-6

# argv: RUNTIME APP ARGS...; runs APP as __main__ on the real onnxruntime or on mlrt, then
# says which module `onnxruntime` was and whether any file of the real package was loaded
LAUNCH = """\
import os, runpy, sys
if sys.argv[1] == "mlrt":
    import mlrt.lowlevel
    mlrt.lowlevel.install_as_onnxruntime()
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
real = [n for n, m in list(sys.modules.items())
        if f"{os.sep}onnxruntime{os.sep}" in (getattr(m, "__file__", None) or "")]
print("[ran on]", sys.modules["onnxruntime"].__name__, "real onnxruntime files:", bool(real))
"""
EXPECTED = {"onnxruntime": "[ran on] onnxruntime real onnxruntime files: True",
            "mlrt": "[ran on] mlrt.lowlevel real onnxruntime files: False"}


class AppFailed(AssertionError):
    """The app exited with an error (or did not run where it should)."""


class MissingOperator(AppFailed):
    """The app failed on mlrt only because mlrt refused an operator it does not have."""


@dataclasses.dataclass
class AppRun:
    runtime: str
    lines: list[str]  # stdout, without the launcher's last line
    arrays: dict[str, np.ndarray]  # what the app saved with np.savez

    def assert_matches(self, ort: AppRun, tolerances: dict[str, tuple[float, float]] | None = None) -> None:
        """Printed lines identical; saved arrays: same keys, shapes and dtypes, integers and
        strings equal, floats within (rtol, atol) = tolerances.get(key, (1e-5, 1e-6))."""
        assert self.lines == ort.lines
        assert sorted(self.arrays) == sorted(ort.arrays)
        for key, want in ort.arrays.items():
            got = self.arrays[key]
            assert (got.shape, got.dtype) == (want.shape, want.dtype), key
            if np.issubdtype(want.dtype, np.floating):
                rtol, atol = (tolerances or {}).get(key, (RTOL, ATOL))
                np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=key)
            else:
                np.testing.assert_array_equal(got, want, err_msg=key)


def _start(runtime: str, script: Path, args: list, out: Path, cwd: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-c", LAUNCH, runtime, str(script), *map(str, args), str(out)]
    return subprocess.Popen(cmd, cwd=cwd, env=dict(os.environ, PYTHONHASHSEED="0"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def run(script: str, args: list, folder: Path, timeout: float = 300) -> tuple[AppRun, AppRun]:
    """(onnxruntime's AppRun, mlrt's AppRun) for tests/apps/SCRIPT ARGS... OUT.npz, both run at once."""
    outs = {rt: folder / f"{Path(script).stem}.{rt}.npz" for rt in EXPECTED}
    procs = {rt: _start(rt, HERE / script, args, outs[rt], folder) for rt in EXPECTED}
    done = {}
    for rt, proc in procs.items():
        try:
            done[rt] = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            done[rt] = proc.communicate()
            raise AppFailed(f"{script} on {rt} timed out:\n{done[rt][1]}") from None
    runs = {}
    for rt, proc in procs.items():
        stdout, stderr = done[rt]
        if proc.returncode != 0:
            last = stderr.strip().splitlines()[-1:] or [""]
            missing = re.match(r"mlrt\._errors\.NotImplemented: .*operator (\S+::\S+) ", last[0])
            cls = MissingOperator if rt == "mlrt" and missing else AppFailed
            raise cls(f"{script} on {rt} failed:\n{stdout}\n{stderr}")
        lines = stdout.splitlines()
        if not lines or lines[-1] != EXPECTED[rt]:
            raise AppFailed(f"{script} did not run on {rt}: {lines[-1:]}")
        with np.load(outs[rt], allow_pickle=False) as saved:
            runs[rt] = AppRun(rt, lines[:-1], dict(saved))
    return runs["onnxruntime"], runs["mlrt"]
