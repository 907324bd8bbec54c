"""Programs are built once per device and kept on disk: the first session on a device
builds the programs it needs in one child process and says so in one log line with
the time it took; a second process creating a session for the same model builds nothing
(its programs come from MLRT_OPENCL_CACHE; PoCL's own cache is pointed at a fresh
folder each time so it cannot stand in for ours) and logs no such line."""

import json
import logging
import os
import re
import subprocess
import sys

import numpy as np

import mlrt.lowlevel as ml
from mlrt.native.opencl import _programs
from opencl_check import opencl_device
from test_opencl_faults import EXPECTED, OPENCL, X, _model, _placed

SCRIPT = r"""
import json, logging, sys, time
logging.basicConfig(level=logging.WARNING, format="LOG %(message)s", stream=sys.stderr)
import numpy as np
from onnx import TensorProto as TP, helper as h
import mlrt.lowlevel as ml
from mlrt.native.opencl._device import default_device
nodes = [h.make_node("Relu", ["x"], ["a"]), h.make_node("Sigmoid", ["a"], ["y"])]
g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [8])], [h.make_tensor_value_info("y", TP.FLOAT, [8])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
default_device()  # device choice (and its probe) is not part of what is measured
t = time.perf_counter()
sess = ml.InferenceSession(m, providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
seconds = time.perf_counter() - t
y = sess.run(None, {"x": np.linspace(-1, 1, 8, dtype=np.float32)})[0]
print(json.dumps({"builds": default_device().source_builds, "seconds": seconds, "y": y.tolist(),
                  "where": sorted({p for _, _, p in sess.get_node_assignment()})}))
"""


def _session_in_new_process(cache, pocl_cache):
    env = dict(os.environ, MLRT_OPENCL_CACHE=str(cache), POCL_CACHE_DIR=str(pocl_cache))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["log"] = [ln[4:] for ln in out.stderr.splitlines() if ln.startswith("LOG ")]
    return result


def test_second_session_builds_nothing(tmp_path):
    opencl_device()
    first = _session_in_new_process(tmp_path / "mlrt", tmp_path / "pocl1")
    second = _session_in_new_process(tmp_path / "mlrt", tmp_path / "pocl2")
    assert first["where"] == second["where"] == ["OpenCLExecutionProvider"]
    assert first["builds"] == 1  # the one program the model needs: activation for float32
    # one line with the time it took (and, before it, one saying it started if it ran past 5 s)
    built = [ln for ln in first["log"] if ln.startswith("OpenCL: built ")]
    assert len(built) == 1 and len([ln for ln in first["log"] if "kernel program" in ln]) <= 2, first["log"]
    assert built[0].startswith("OpenCL: built 1 kernel program for ")
    assert " s, once for this device, driver and mlrt version" in built[0]
    assert second["builds"] == 0, second
    assert not [ln for ln in second["log"] if "kernel program" in ln]
    assert list((tmp_path / "mlrt").glob("activation-*.bin"))
    assert first["y"] == second["y"]


def test_an_unwritable_cache_still_runs_on_opencl(monkeypatch, caplog):
    """A cache folder that cannot be written costs the next process a build, nothing more."""
    device = opencl_device()
    monkeypatch.setenv("MLRT_OPENCL_CACHE", "/proc/mlrt-cannot-write-here")
    monkeypatch.setattr(device, "_programs", {})
    monkeypatch.setattr(device, "_broken", {})
    with caplog.at_level(logging.WARNING, logger="mlrt"):
        sess = ml.InferenceSession(_model(), providers=OPENCL)
    assert _placed(sess) == {"OpenCLExecutionProvider"}
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)
    assert any("cannot be written" in r.getMessage() for r in caplog.records)


def test_family_sizes_reach_the_cl_files_only_as_build_options():
    """What a family's module fixes (BUILD_OPTIONS: work-group sizes, tiles,
    vector widths; C_CONSTANTS: numbers of kernels/*.h) is used by its .cl file and
    never #defined there, so the two cannot drift apart."""
    seen = 0
    for cl_file in sorted(_programs.HERE.glob("*.cl")):
        text = cl_file.read_text()
        for name in _programs.family_options(cl_file.stem):
            seen += 1
            assert re.search(rf"\b{name}\b", text), f"{cl_file.name} does not use {name}"
            assert not re.search(rf"#\s*define\s+{name}\b", text), f"{cl_file.name} #defines {name}"
    assert seen >= 14
