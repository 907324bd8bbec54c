"""A driver's compiler that crashes or hangs never reaches this process: programs are
built in a child process (native/opencl/_compiler.py), and one that dies or hangs
there is marked broken in the cache with the compiler's last lines; the nodes that
need that program run on the CPU (with a warning naming why), the rest stay on
OpenCL, the answer is right, and later sessions read the verdict instead of building
again.  The broken driver is tests/native/opencl/faulty_compiler.py,
run as the child: the real child, made to abort or hang on one program."""

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import mlrt.lowlevel as ml
from mlrt._errors import DeviceError
from mlrt.native.opencl import _compiler, _device, _programs
from opencl_check import opencl_device
from test_opencl_faults import EXPECTED, OPENCL, X, _model, _placed  # the Relu -> Sigmoid model

FAULTY = Path(__file__).with_name("faulty_compiler.py")
ACTIVATION_MARK = "Activations and elementwise math on one tensor"  # in activation.cl alone


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty program cache, and the device's programs forgotten."""
    device = opencl_device()
    monkeypatch.setenv("MLRT_OPENCL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(device, "_programs", {})
    monkeypatch.setattr(device, "_broken", {})
    return tmp_path / "cache"


def _faulty(monkeypatch, mark: str, fault: str = "abort") -> None:
    monkeypatch.setenv("MLRT_TEST_FAULT_MARK", mark)
    monkeypatch.setenv("MLRT_TEST_FAULT", fault)
    monkeypatch.setattr(_compiler, "CHILD", [sys.executable, str(FAULTY), str(Path(_compiler.__file__))])


def _softmax_relu():
    """Softmax (its own program) then Relu (the activation program)."""
    nodes = [h.make_node("Softmax", ["x"], ["s"], name="softmax"), h.make_node("Relu", ["s"], ["y"], name="relu")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4, 5])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [4, 5])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()


def _where(sess) -> dict:
    return {name: p for name, op, p in sess.get_node_assignment() if not op.startswith("Memcpy")}


def test_crashing_compiler_is_marked_broken_and_only_its_nodes_leave_opencl(cache, monkeypatch, caplog):
    _faulty(monkeypatch, ACTIVATION_MARK)
    with caplog.at_level(logging.WARNING, logger="mlrt"):
        sess = ml.InferenceSession(_softmax_relu(), providers=OPENCL)
    assert _where(sess) == {"softmax": "OpenCLExecutionProvider", "relu": "CPUExecutionProvider"}
    e = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    (verdict,) = cache.glob("activation-*.broken")
    reason = json.loads(verdict.read_text())["reason"]
    assert "died (killed by SIGABRT) while building activation:float32" in reason
    assert "LLVM ERROR: Cannot select" in reason  # the compiler's last words are kept
    assert any("killed by SIGABRT" in r.getMessage() and "run on the CPU" in r.getMessage() for r in caplog.records)

    # A later session (here: the device's programs forgotten, as in a new process)
    # reads the verdict: no build process is started again.
    device = opencl_device()
    monkeypatch.setattr(device, "_programs", {})
    monkeypatch.setattr(device, "_broken", {})
    monkeypatch.setattr(_compiler, "build", lambda *a: pytest.fail("a build process was started again"))
    again = ml.InferenceSession(_model(), providers=OPENCL)
    assert _placed(again) == {"CPUExecutionProvider"}
    np.testing.assert_allclose(again.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)


def test_other_programs_still_build_after_a_crash(cache, monkeypatch):
    """The child that died is replaced for the programs after the broken one."""
    device = opencl_device()
    _faulty(monkeypatch, ACTIVATION_MARK)
    jobs = [device._family_job("activation", "float32"), device._family_job("softmax", "float32")]
    broken = _compiler.build(device.identity, jobs)
    assert list(broken) == ["activation:float32"]
    assert jobs[1].path.exists() and jobs[1].verdict() is None
    assert device._load(jobs[1]) is not None


def test_hanging_compiler_is_stopped_at_the_time_limit(cache, monkeypatch, caplog):
    _faulty(monkeypatch, ACTIVATION_MARK, fault="hang")
    monkeypatch.setenv("MLRT_OPENCL_BUILD_TIMEOUT", "3")
    monkeypatch.setattr(_programs, "SLOW_BUILD_S", 0.5)
    with caplog.at_level(logging.WARNING, logger="mlrt"):
        sess = ml.InferenceSession(_model(), providers=OPENCL)
    # a build that runs long is announced while it runs
    assert any(r.getMessage().startswith("OpenCL: building 1 kernel program(s) for ") for r in caplog.records)
    assert _placed(sess) == {"CPUExecutionProvider"}
    reason = json.loads(next(cache.glob("activation-*.broken")).read_text())["reason"]
    assert "did not finish within 3 s" in reason
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)
    assert list(cache.glob("activation-*.broken"))


def test_a_device_whose_probe_crashes_is_passed_over(cache, monkeypatch):
    opencl_device()
    monkeypatch.setattr(_device, "_chosen", None)
    monkeypatch.setattr(_device, "_failures", [])
    _faulty(monkeypatch, "mlrt_probe")  # every device's compiler dies on the probe
    with pytest.raises(DeviceError, match="no usable OpenCL device: .*killed by SIGABRT"):
        _device.default_device()
    assert all("SIGABRT" in line for line in _device.passed_over())
    assert list(cache.glob("probe-*.broken"))
    with pytest.warns(RuntimeWarning, match="unavailable"):  # sessions still work, on the CPU
        sess = ml.InferenceSession(_model(), providers=OPENCL)
    np.testing.assert_allclose(sess.run(None, {"x": X})[0], EXPECTED, rtol=1e-6)


def test_a_compile_error_is_a_verdict_too(cache):
    device = opencl_device()
    job = _programs.program_job(device.identity, "bad:float32",
                                "__kernel void k(__global float *x) { this is not C; }", "")
    broken = _compiler.build(device.identity, [job])
    assert "bad:float32" in broken and job.verdict() == broken["bad:float32"]
    with pytest.raises(DeviceError, match="failed to build"):
        device._program_for(job)


@pytest.mark.parametrize("child, says", [
    ("import time; time.sleep(60)", "did not finish within 2 s (MLRT_OPENCL_BUILD_TIMEOUT) before building anything"),
    ("print('not json'); print('42'); print('{\"done\": \"some other program\"}')", "ended without finishing"),
    ("import sys; sys.stderr.write('driver: cannot open device\\n'); sys.exit(3)", "exit status 3"),
])
def test_a_child_that_never_builds_anything_marks_every_job(cache, monkeypatch, child, says):
    """A driver that hangs or dies on start, or a child answering nonsense, ends in
    verdicts for every job asked, never in a loop or a hang of this process."""
    device = opencl_device()
    monkeypatch.setenv("MLRT_OPENCL_BUILD_TIMEOUT", "2")
    monkeypatch.setattr(_compiler, "CHILD", [sys.executable, "-c", child])
    jobs = [device._family_job("softmax", "float32"), device._family_job("pool", "float32")]
    broken = _compiler.build(device.identity, jobs)
    assert sorted(broken) == ["pool:float32", "softmax:float32"]
    assert all(says in reason for reason in broken.values()), broken
    assert all(j.verdict() == broken[j.key] for j in jobs)
