"""The intra-op pool's workers between runs (src/threadpool.c): called back to back, a
session's runs find its workers awake -- they spin up to HOT_SPIN_NS (0.5 ms) after the
run's plan ends, also where the run's last parallel loop ended it -- and an idle
session's workers sleep.  Counted from the kernel's figures for the workers' threads:
a worker that sleeps and is woken counts a voluntary context switch."""

import os
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt.lowlevel as ml
from mlrt.native import _lib

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task") or not hasattr(os, "sched_getaffinity"),
                                reason="per-thread scheduler figures: Linux /proc only")

GAP_S = 250e-6  # between runs: longer than a worker's short spin, shorter than HOT_SPIN_NS


def _conv_model() -> bytes:
    """One conv whose work is cut across the threads: the run's last loop is parallel."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "spin",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 64, 64])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _status(tid: str, field: str) -> int:
    with open(f"/proc/self/task/{tid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def _cpu_ns(tid: str) -> int:
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        return int(f.read().split()[0])


@pytest.fixture
def session_and_workers(monkeypatch):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one processor allowed here: a spinning worker would take the caller's")
    model = _conv_model()
    opts = ml.SessionOptions()
    opts.intra_op_num_threads = 1
    ml.InferenceSession(model, opts).run(None, {"x": np.zeros((1, 8, 64, 64), np.float32)})  # the library loaded
    monkeypatch.setattr(_lib, "_IDLE", {})  # a pool of its own (not one an earlier session left idle)
    before = set(os.listdir("/proc/self/task"))
    opts.intra_op_num_threads = 2
    s = ml.InferenceSession(model, opts)
    workers = sorted(set(os.listdir("/proc/self/task")) - before, key=int)
    assert len(workers) == 1, f"a pool of two threads started {len(workers)} workers"
    return s, workers


def _busy(seconds: float):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_back_to_back_runs_find_the_workers_awake(session_and_workers):
    s, workers = session_and_workers
    x = {"x": np.random.default_rng(0).standard_normal((1, 8, 64, 64)).astype(np.float32)}
    want = s.run(None, x)[0]
    for _ in range(10):
        s.run(None, x)
    runs = 200
    woken = -sum(_status(t, "voluntary_ctxt_switches") for t in workers)
    for _ in range(runs):
        got = s.run(None, x)[0]
        _busy(GAP_S)
    woken += sum(_status(t, "voluntary_ctxt_switches") for t in workers)
    np.testing.assert_array_equal(got, want)
    # (the worker slept after every run when it asked whether a plan ran only after its
    # short spin: 193 wake-ups in 200 runs; a busy host may still preempt some gaps)
    assert woken < runs // 2, f"the worker slept {woken} times in {runs} runs {GAP_S * 1e6:.0f} us apart"


def test_an_idle_sessions_workers_sleep(session_and_workers):
    s, workers = session_and_workers
    x = {"x": np.ones((1, 8, 64, 64), np.float32)}
    for _ in range(20):
        s.run(None, x)
    time.sleep(0.05)  # a hundred times HOT_SPIN_NS
    used = -sum(_cpu_ns(t) for t in workers)
    time.sleep(0.1)
    used += sum(_cpu_ns(t) for t in workers)
    assert used < 5e6, f"the idle session's worker ran {used / 1e6:.1f} ms of the last 100"
