"""RunOptions.terminate set from another thread while run() is running stops that run
with an MlrtError (onnxruntime: Fail "Exiting due to terminate flag being set to true"),
read inside C between the nodes of a plan and the iterations of a loop; the session
stays usable for the next run."""

import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml
from mlrt.native import _lib
from mlrt.native.terminate import MESSAGE

_OPSET = [helper.make_opsetid("", 17)]


def loop_model() -> onnx.ModelProto:
    """y = x + M (as float), counted one Add per Loop iteration: M = 10**12 never ends."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Add", ["acc", "one"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond", T.BOOL, []),
         helper.make_tensor_value_info("acc", T.FLOAT, [4])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("acc_out", T.FLOAT, [4])],
        [helper.make_tensor("one", T.FLOAT, [], [1.0])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)], "loop",
        [helper.make_tensor_value_info("M", T.INT64, []), helper.make_tensor_value_info("x", T.FLOAT, [4])],
        [helper.make_tensor_value_info("y", T.FLOAT, [4])])
    return helper.make_model(g, opset_imports=_OPSET)


CHAIN, WIDTH = 2000, 1024


def chain_model() -> onnx.ModelProto:
    """2000 MatMuls by a permutation (a roll of the columns by one): one native plan.  With
    4096 rows each MatMul is 8.6 GFLOP, 17 TFLOP in all: minutes, not seconds."""
    w = np.roll(np.eye(WIDTH, dtype=np.float32), 1, axis=1)
    nodes = [helper.make_node("MatMul", ["x" if k == 0 else f"h{k}", "W"], [f"h{k + 1}" if k < CHAIN - 1 else "y"])
             for k in range(CHAIN)]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", T.FLOAT, ["N", WIDTH])],
                          [helper.make_tensor_value_info("y", T.FLOAT, ["N", WIDTH])],
                          [onnx.numpy_helper.from_array(w, "W")])
    return helper.make_model(g, opset_imports=_OPSET)


def _reads_flag_in_c() -> bool:
    return hasattr(_lib.lib(), "mlrt_plan_run_flagged")


needs_flag_in_c = pytest.mark.skipif("not _reads_flag_in_c()",
                                     reason="an older ABI-2 runtime reads no terminate flag inside C")


def _session(model, **options):
    so = ml.SessionOptions()
    so.graph_optimization_level = ml.GraphOptimizationLevel.ORT_DISABLE_ALL
    for k, v in options.items():
        setattr(so, k, v)
    return ml.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _terminated_run(sess, feeds, delay=0.3):
    """Run with RunOptions whose terminate another thread sets after `delay` s: returns the
    error raised and the seconds from setting terminate to run() returning."""
    ro = ml.RunOptions()
    set_at = []

    def stop():
        time.sleep(delay)
        set_at.append(time.monotonic())
        ro.terminate = True

    t = threading.Thread(target=stop)
    t.start()
    try:
        with pytest.raises(mlrt.MlrtError) as info:
            sess.run(None, feeds, ro)
        ended = time.monotonic()
    finally:
        t.join()
    assert set_at, "run() ended before terminate was set"
    assert ro._flags == set()  # the run's flag is no longer written
    return info.value, ended - set_at[0]


def test_terminate_stops_a_loop_iterated_in_c():
    sess = _session(loop_model())
    x = np.arange(4, dtype=np.float32)
    err, took = _terminated_run(sess, {"M": np.array(10**12, np.int64), "x": x})
    assert type(err) is mlrt.MlrtError and MESSAGE in str(err)
    assert took < 5.0
    (y,) = sess.run(None, {"M": np.array(1000, np.int64), "x": x}, ml.RunOptions())
    np.testing.assert_array_equal(y, x + 1000)


def test_terminate_stops_a_loop_iterated_in_python(tmp_path):
    # while profiling, the body runs once per iteration from Python (run_subgraph)
    sess = _session(loop_model(), enable_profiling=True, profile_file_prefix=str(tmp_path / "p"))
    x = np.zeros(4, np.float32)
    err, took = _terminated_run(sess, {"M": np.array(10**12, np.int64), "x": x})
    assert MESSAGE in str(err) and took < 5.0
    (y,) = sess.run(None, {"M": np.array(7, np.int64), "x": x}, ml.RunOptions())
    np.testing.assert_array_equal(y, x + 7)


@needs_flag_in_c
def test_terminate_stops_a_native_plan_between_nodes():
    sess = _session(chain_model())
    err, took = _terminated_run(sess, {"x": np.ones((4096, WIDTH), np.float32)}, delay=0.5)
    assert type(err) is mlrt.MlrtError and MESSAGE in str(err)
    assert took < 5.0
    x = np.arange(2 * WIDTH, dtype=np.float32).reshape(2, WIDTH)
    ro = ml.RunOptions()
    (y,) = sess.run(None, {"x": x}, ro)
    np.testing.assert_array_equal(y, np.roll(x, CHAIN, axis=1))
    ro.terminate = True  # set and cleared again between runs: the options are usable again
    ro.terminate = False
    (y,) = sess.run(None, {"x": x}, ro)
    np.testing.assert_array_equal(y, np.roll(x, CHAIN, axis=1))


def test_terminate_before_run_refuses_at_once():
    sess = _session(loop_model())
    ro = ml.RunOptions()
    ro.terminate = True
    assert ro.terminate is True
    start = time.monotonic()
    with pytest.raises(mlrt.MlrtError, match="terminate"):
        sess.run(None, {"M": np.array(10**12, np.int64), "x": np.zeros(4, np.float32)}, ro)
    assert time.monotonic() - start < 5.0
    ro.terminate = False
    (y,) = sess.run(None, {"M": np.array(3, np.int64), "x": np.zeros(4, np.float32)}, ro)
    np.testing.assert_array_equal(y, np.full(4, 3, np.float32))


def _add_plan(ffi, lib, n_nodes):
    """A plan of n_nodes Adds, x + x -> x in place on one 4-float external."""
    k = lib.mlrt_kernel_find(b"", b"Add", 14, T.FLOAT)
    assert k >= 0
    t = ffi.new("mlrt_tensor[3]")
    slots = ffi.new("mlrt_slot[3]")
    for i in range(3):
        _lib.fill_tensor(t[i], T.FLOAT, (4,))
        slots[i].base, slots[i].offset = 1, 0
    records = ffi.new("mlrt_node_record[]", n_nodes)
    name = ffi.new("char[]", b"add")
    for r in records:
        r.kernel, r.n_inputs, r.n_outputs = k, 2, 1
        r.inputs, r.input_slots, r.outputs, r.output_slots = t, slots, t + 2, slots + 2
        r.params, r.params_size, r.name = ffi.NULL, 0, name
    plan = lib.mlrt_plan_create(records, n_nodes, 1, 0)
    assert plan != ffi.NULL
    return ffi.gc(plan, lib.mlrt_plan_destroy)


@needs_flag_in_c
def test_c_plan_and_loop_read_the_flag():
    ffi, lib = _lib.ffi(), _lib.lib()
    plan = _add_plan(ffi, lib, 3)
    x = np.ones(4, np.float32)
    ext = ffi.new("void *[1]", [ffi.from_buffer(x)])
    flag = ffi.new("int32_t *")
    assert lib.mlrt_plan_run_flagged(plan, ffi.NULL, ext, ffi.NULL, ffi.NULL, flag) == 0
    np.testing.assert_array_equal(x, 8)
    flag[0] = 1
    assert lib.mlrt_plan_run_flagged(plan, ffi.NULL, ext, ffi.NULL, ffi.NULL, flag) == lib.MLRT_ERR_TERMINATED
    assert ffi.string(lib.mlrt_last_error()).decode() == MESSAGE
    np.testing.assert_array_equal(x, 8)  # no node ran
    assert lib.mlrt_plan_run(plan, ffi.NULL, ext, ffi.NULL) == 0  # (the old entry points never read one)
    np.testing.assert_array_equal(x, 64)

    loop = ffi.new("mlrt_loop *")
    loop.iterations, loop.index_input, loop.cond_input, loop.cond_output = 5, -1, -1, -1
    assert loop.terminate == ffi.NULL  # (ffi.new zeroes it: never terminated)
    assert lib.mlrt_plan_run_loop(plan, ffi.NULL, ext, ffi.NULL, loop) == 0 and loop.done == 5
    loop.terminate = flag
    assert lib.mlrt_plan_run_loop(plan, ffi.NULL, ext, ffi.NULL, loop) == lib.MLRT_ERR_TERMINATED
    assert loop.done == 0
    with pytest.raises(mlrt.MlrtError, match="RunOptions.terminate was set"):
        _lib.raise_status(lib.MLRT_ERR_TERMINATED)
