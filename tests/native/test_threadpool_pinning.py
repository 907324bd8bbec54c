"""Pinned intra-op pools (mlrt_threadpool_create_pinned): each worker kept to a processor
of its own, the caller left free; a session at its default thread count gets one, a
session given a thread count does not (onnxruntime's default)."""

import os
import threading

import numpy as np
import pytest

import mlrt.lowlevel as ml
from mlrt.native import _lib

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="thread affinity: Linux only")


def _new_threads(make):
    """The thread ids `make()` starts, and what it returned."""
    before = set(os.listdir("/proc/self/task"))
    made = make()
    return sorted(set(os.listdir("/proc/self/task")) - before, key=int), made


def _affinities(tids):
    return sorted((sorted(os.sched_getaffinity(int(t))) for t in tids))


def test_pinned_pool_gives_each_worker_one_processor_of_the_callers():
    lib = _lib.lib()
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip(f"one processor allowed here ({allowed}): a pool of one thread has no worker to pin")
    tids, pool = _new_threads(lambda: lib.mlrt_threadpool_create_pinned(len(allowed)))
    try:
        assert lib.mlrt_threadpool_size(pool) == len(allowed)
        # worker i on the i-th processor; the first is left to the caller, which stays free
        assert _affinities(tids) == [[c] for c in allowed[1:]]
        assert sorted(os.sched_getaffinity(0)) == allowed
    finally:
        lib.mlrt_threadpool_destroy(pool)


def test_more_threads_than_processors_are_not_pinned():
    lib = _lib.lib()
    allowed = sorted(os.sched_getaffinity(0))
    tids, pool = _new_threads(lambda: lib.mlrt_threadpool_create_pinned(len(allowed) + 1))
    try:
        assert _affinities(tids) == [allowed] * len(allowed)
    finally:
        lib.mlrt_threadpool_destroy(pool)


def test_pool_made_on_a_restricted_thread_pins_within_its_processors():
    """The processors counted are the creating thread's: one thread kept to the last
    processor asking for two threads gets a free worker on that processor alone."""
    lib = _lib.lib()
    allowed = sorted(os.sched_getaffinity(0))
    got = {}

    def make():
        os.sched_setaffinity(0, {allowed[-1]})
        got["tids"], got["pool"] = _new_threads(lambda: lib.mlrt_threadpool_create_pinned(2))

    t = threading.Thread(target=make)
    t.start()
    t.join()
    try:
        assert lib.mlrt_threadpool_size(got["pool"]) == 2
        assert _affinities(got["tids"]) == [[allowed[-1]]]
    finally:
        lib.mlrt_threadpool_destroy(got["pool"])


def _add_model():
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4096])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _cpu_pool(session):
    return next(p.pool for p in session._providers if p.name == "CPUExecutionProvider")


def test_session_default_pool_is_pinned_and_one_thread_per_allowed_processor():
    s = ml.InferenceSession(_add_model())
    pool = _cpu_pool(s)
    assert pool.pinned is True
    assert pool.size == len(os.sched_getaffinity(0))
    x = np.linspace(-1, 1, 4096, dtype=np.float32)
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], np.maximum(x, 0))


def test_session_with_a_thread_count_is_not_pinned():
    so = ml.SessionOptions()
    so.intra_op_num_threads = 3
    s = ml.InferenceSession(_add_model(), so)
    pool = _cpu_pool(s)
    assert (pool.pinned, pool.size) == (False, 3)
    x = np.linspace(-1, 1, 4096, dtype=np.float32)
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], np.maximum(x, 0))
