"""tests/apps: scripts written the way onnxruntime users write them (`import onnxruntime
as ort`, `ort.InferenceSession(path, providers=[...])`, numpy around it), each run in two
child processes: once on the real onnxruntime and once with mlrt installed first through
`mlrt.lowlevel.install_as_onnxruntime()`. The script is the same file both times; apprun.py
runs and compares them. Models are built at test time into tmp_path; nothing is downloaded."""

import pytest

import apprun


@pytest.fixture
def run_app(tmp_path):
    """run_app("script.py", *args) -> (onnxruntime's AppRun, mlrt's AppRun)."""
    pytest.importorskip("onnxruntime")
    return lambda script, *args: apprun.run(script, list(args), tmp_path)
