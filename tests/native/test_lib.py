"""native/_lib.py: C constants read from the loaded runtime (the numbers live only in
the headers) and C statuses turned into the MlrtError tree."""

import ast
import re
from pathlib import Path

import pytest

from mlrt._errors import InvalidArgument, MlrtError, NotImplemented, ResourceExhausted, RuntimeLoadError
from mlrt.native import _lib

NATIVE = Path(_lib.__file__).resolve().parent
CONSTANT = re.compile(r"MLRT_[A-Z0-9_]+")


def _constants_named(folder: Path) -> set[str]:
    names = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CONSTANT.fullmatch(node.value):
                names.add(node.value)
    return names


def test_enum_value_is_the_headers_number():
    assert _lib.enum_value("MLRT_RESIZE_CUBIC") == _lib.lib().MLRT_RESIZE_CUBIC
    assert _lib.enum_value("MLRT_ERR_NOT_IMPLEMENTED") == _lib.lib().MLRT_ERR_NOT_IMPLEMENTED


def test_enum_value_of_an_unknown_constant():
    with pytest.raises(RuntimeLoadError, match="MLRT_NO_SUCH_MODE"):
        _lib.enum_value("MLRT_NO_SUCH_MODE")


def test_every_constant_the_operators_name_is_in_the_headers():
    names = _constants_named(NATIVE / "ops")
    assert len(names) > 50  # the mode tables of Resize, Pad, GridSample, the ML and RNN ops...
    missing = [n for n in sorted(names) if not hasattr(_lib.lib(), n)]
    assert not missing, f"named in native/ops but not in kernels/*.h: {missing}"


@pytest.mark.parametrize("name, error", [("MLRT_ERR_INVALID_ARGUMENT", InvalidArgument),
                                         ("MLRT_ERR_NOT_IMPLEMENTED", NotImplemented),
                                         ("MLRT_ERR_OUT_OF_MEMORY", ResourceExhausted),
                                         ("MLRT_ERR_INTERNAL", MlrtError)])
def test_raise_status(name, error):
    with pytest.raises(error, match="^here: "):
        _lib.raise_status(_lib.enum_value(name), "here")


def test_raise_status_ok():
    assert _lib.raise_status(_lib.enum_value("MLRT_OK")) is None


def test_a_released_thread_pool_serves_the_next_one():
    """A pool whose last reference went is kept idle and handed to the next pool of as
    many threads (threads are not started and joined for every session); it still runs
    work, and a forked child never gets the parent's idle pools."""
    import gc
    import os

    import numpy as np
    from onnx import TensorProto, helper

    from mlrt.native import graph as graph_mod
    from mlrt.native.ops import make_op
    from mlrt.native.plan.eager import run_eager

    with _lib._IDLE_LOCK:  # (earlier tests may have filled the idle list: then a released pool is destroyed)
        for pool in _lib._IDLE.values():
            _lib.lib().mlrt_threadpool_destroy(pool)
        _lib._IDLE.clear()
    first = _lib.ThreadPool(3)
    address = int(_lib.ffi().cast("uintptr_t", first.handle))
    del first
    gc.collect()
    again = _lib.ThreadPool(3)
    assert int(_lib.ffi().cast("uintptr_t", again.handle)) == address and again.size == 3
    n = 1 << 20
    g = graph_mod.from_graph_proto(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])]), {"": 17})
    x = np.arange(n, dtype=np.float32) - n / 2
    np.testing.assert_array_equal(run_eager(make_op(g.nodes[0], g), [x], again)[0], np.maximum(x, 0))
    del again
    gc.collect()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if not _lib._IDLE else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0 and _lib._IDLE


def test_a_forked_child_runs_and_drops_the_parents_pools():
    """In a child forked from a process whose pools have working threads (onnx's
    checker runs in one): a pool runs loops on the caller alone, and dropping it does
    not wait for the parent's threads (it hung in pthread_cond_destroy)."""
    import gc
    import os
    import time

    import numpy as np
    from onnx import TensorProto, helper

    from mlrt.native import graph as graph_mod
    from mlrt.native.ops import make_op
    from mlrt.native.plan.eager import run_eager

    n = 1 << 20
    g = graph_mod.from_graph_proto(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])]), {"": 17})
    x = np.arange(n, dtype=np.float32) - n / 2
    pools = [_lib.ThreadPool(2), _lib.ThreadPool(5)]  # distinct sizes: neither is an idle one
    for pool in pools:
        run_eager(make_op(g.nodes[0], g), [x], pool)  # the workers have run and wait
    pid = os.fork()
    if pid == 0:
        try:
            ok = all(np.array_equal(run_eager(make_op(g.nodes[0], g), [x], p)[0], np.maximum(x, 0)) for p in pools)
            pools.clear()
            gc.collect()
            own = _lib.ThreadPool(7)  # a pool made in the child has threads of its own
            ok = ok and np.array_equal(run_eager(make_op(g.nodes[0], g), [x], own)[0], np.maximum(x, 0))
            os._exit(0 if ok else 3)
        except BaseException:
            os._exit(4)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError("the forked child hung")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    for pool in pools:  # the parent's pools still work
        np.testing.assert_array_equal(run_eager(make_op(g.nodes[0], g), [x], pool)[0], np.maximum(x, 0))
