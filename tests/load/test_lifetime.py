"""Short slices of tests/load/lifetime.py (RSS growth over create / run / destroy cycles
and over runs of one session), sessions made and dropped from many threads at once, and
RunOptions.terminate set from another thread while several runs share one session."""

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lowlevel"))
import mlrt  # noqa: E402
import mlrt.lowlevel as ml  # noqa: E402
from lifetime import PROVIDERS, cycles, model_path, runs  # noqa: E402
from opencl_check import opencl_device  # noqa: E402
from test_terminate import loop_model  # noqa: E402

from mlrt.native.terminate import MESSAGE  # noqa: E402

MB = 1 << 20
# (cycles, runs) per provider: the full check is 1,000 and 10,000 with a 5 MB bound; a
# slice gets the same bound (loose for it, but it catches a leak of ~50 KB a cycle).  The
# warm-up is 10%, and at least 10 cycles: the OpenCL buffer pool fills in the first few.
SLICE = {"cpu": (100, 800), "opencl": (40, 200)}


def _provider(name):
    if name == "opencl":
        opencl_device()
    return PROVIDERS[name]


@pytest.mark.parametrize("provider", ["cpu", "opencl"])
def test_rss_flat_over_create_run_destroy_cycles(provider):
    n = SLICE[provider][0]
    s = cycles(model_path("squeezenet"), _provider(provider), n, warmup=max(10, n // 10))
    assert s["mismatches"] == 0
    assert s["growth"] < 5 * MB, f"RSS grew {s['growth'] / MB:.2f} MB over {s['counted']} cycles"


@pytest.mark.parametrize("provider", ["cpu", "opencl"])
def test_rss_flat_over_runs_of_one_session(provider):
    s = runs(model_path("squeezenet"), _provider(provider), SLICE[provider][1])
    assert s["mismatches"] == 0
    assert s["growth"] < 5 * MB, f"RSS grew {s['growth'] / MB:.2f} MB over {s['counted']} runs"


@pytest.mark.parametrize("provider", ["cpu", "opencl"])
def test_sessions_made_and_dropped_from_8_threads(provider):
    providers = _provider(provider)
    model = model_path("squeezenet")
    ref = ml.InferenceSession(model, providers=providers)
    name = ref.get_inputs()[0].name
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    expected = ref.run(None, {name: x})[0]
    del ref
    errors, wrong, done = [], [], []
    start = threading.Barrier(8)

    def worker(t):
        start.wait()
        for _ in range(3):
            try:
                s = ml.InferenceSession(model, providers=providers)
                got = s.run(None, {name: x})[0]
                del s
            except Exception as exc:  # noqa: BLE001 -- every failure is reported
                errors.append(f"thread {t}: {type(exc).__name__}: {exc}")
                continue
            (done if np.array_equal(got, expected) else wrong).append(t)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == [] and wrong == [] and len(done) == 24


def _wait_until(cond, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _loop_session():
    so = ml.SessionOptions()
    so.graph_optimization_level = ml.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ml.InferenceSession(loop_model().SerializeToString(), so, providers=["CPUExecutionProvider"])


def test_terminate_one_of_several_runs_sharing_a_session():
    """4 threads run an endless Loop on one session, each with RunOptions of its own, and 4
    more run short loops: terminating the first 4 stops exactly those, the others end
    normally, and the session runs again afterwards."""
    sess = _loop_session()
    x = np.arange(4, dtype=np.float32)
    endless = {"M": np.array(10**12, np.int64), "x": x}
    options = [ml.RunOptions() for _ in range(4)]
    outcome: dict[str, list] = {"stopped": [], "other": [], "short": []}
    lock = threading.Lock()

    def long_run(ro):
        try:
            sess.run(None, endless, ro)
            kind = "other"
        except mlrt.MlrtError as exc:
            kind = "stopped" if MESSAGE in str(exc) else "other"
        with lock:
            outcome[kind].append(ro)

    def short_runs(t):
        for r in range(20):
            (y,) = sess.run(None, {"M": np.array(50 + t + r, np.int64), "x": x}, ml.RunOptions())
            with lock:
                outcome["short"].append(np.array_equal(y, x + 50 + t + r))

    long_threads = [threading.Thread(target=long_run, args=(ro,)) for ro in options]
    short_threads = [threading.Thread(target=short_runs, args=(t,)) for t in range(4)]
    for t in long_threads + short_threads:
        t.start()
    for t in short_threads:
        t.join()
    _wait_until(lambda: all(ro._flags for ro in options))  # every long run is inside run()
    time.sleep(0.1)
    assert outcome["stopped"] == []  # nothing told to stop yet
    set_at = time.monotonic()
    for ro in options:
        ro.terminate = True
    for t in long_threads:
        t.join(timeout=10)
    assert time.monotonic() - set_at < 10
    assert not any(t.is_alive() for t in long_threads)
    assert len(outcome["stopped"]) == 4 and outcome["other"] == []
    assert outcome["short"] == [True] * 80
    (y,) = sess.run(None, {"M": np.array(9, np.int64), "x": x}, ml.RunOptions())
    np.testing.assert_array_equal(y, x + 9)


def test_one_run_options_terminates_every_run_it_is_passed_to():
    sess = _loop_session()
    ro = ml.RunOptions()
    endless = {"M": np.array(10**12, np.int64), "x": np.zeros(4, np.float32)}
    errors = []

    def long_run():
        try:
            sess.run(None, endless, ro)
        except mlrt.MlrtError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=long_run) for _ in range(3)]
    for t in threads:
        t.start()
    _wait_until(lambda: len(ro._flags) == 3)  # all three runs are inside run()
    ro.terminate = True
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert len(errors) == 3 and all(MESSAGE in e for e in errors)
