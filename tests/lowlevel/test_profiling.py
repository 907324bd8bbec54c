"""Profiling (SessionOptions.enable_profiling, end_profiling): a Chrome trace with
onnxruntime's event fields, one "Node" event per node per run -- nodes inside a
native plan timed in C, nodes run one by one, and the nodes of Loop bodies -- and
`mlrt profile MODEL` summarising it."""

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def check_chrome_trace(events) -> None:
    """The structure the Trace Event Format asks of complete events (what Perfetto and
    chrome://tracing load), plus the fields onnxruntime's profiles carry."""
    assert isinstance(events, list) and events
    for e in events:
        assert isinstance(e, dict)
        assert e["ph"] == "X"
        assert isinstance(e["name"], str) and e["name"]
        assert e["cat"] in ("Session", "Node")
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        assert e["ts"] >= 0 and e["dur"] >= 0
        assert isinstance(e["args"], dict)
        if e["cat"] == "Node":
            assert e["name"].endswith("_kernel_time")
            assert {"op_name", "provider", "input_type_shape", "output_type_shape"} <= set(e["args"])
            for shapes in (e["args"]["input_type_shape"], e["args"]["output_type_shape"]):
                for entry in shapes:
                    ((dtype, dims),) = entry.items()
                    assert isinstance(dtype, str) and all(isinstance(d, int) for d in dims)
    json.loads(json.dumps(events))  # plain JSON all the way down


def profiled_session(model, tmp_path, **kwargs):
    so = ml.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "trace")
    return ml.InferenceSession(model, so, **kwargs)


def test_light_model_has_one_event_per_node_per_run(tmp_path):
    sess = profiled_session(str(LIGHT / "light_squeezenet.onnx"), tmp_path)
    started = sess.get_profiling_start_time_ns()
    assert abs(started - time.time_ns()) < 600e9  # on the wall clock, as onnxruntime's
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    for _ in range(3):
        sess.run(None, {"data_0": x})
    path = sess.end_profiling()
    assert Path(path).parent == tmp_path and path.endswith(".json")
    events = json.loads(Path(path).read_text())
    check_chrome_trace(events)
    nodes = [e for e in events if e["cat"] == "Node"]
    assignment = sess.get_node_assignment()
    assert len(nodes) == 3 * len(assignment)
    assert Counter(e["args"]["op_name"] for e in nodes) == Counter({op: 3 * n for op, n in
                                                                    Counter(a[1] for a in assignment).items()})
    assert {e["args"]["provider"] for e in nodes} == {"CPUExecutionProvider"}
    runs = sorted((e for e in events if e["name"] == "model_run"), key=lambda e: e["ts"])
    assert len(runs) == 3 and {e["name"] for e in events if e["cat"] == "Session"} >= {
        "model_loading_uri", "session_initialization", "model_run"}
    for run in runs:  # the nodes of a run, timed in C inside its native plan, lie within it
        inside = [e for e in nodes if run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"] + 1]
        assert len(inside) == len(assignment)
        assert 0 < sum(e["dur"] for e in inside) <= run["dur"]
    first = next(e for e in nodes if e["args"]["op_name"] in ("Conv", "FusedConv", "FusedConvMaxPool"))
    assert first["args"]["input_type_shape"][0] == {"float": [1, 3, 224, 224]}
    # profiling ends with end_profiling: later runs record nothing, a second call has nothing to write
    sess.run(None, {"data_0": x})
    assert sess.end_profiling() == "" and sess.get_profiling_start_time_ns() == started  # (onnxruntime keeps it too)


def loop_model(trip: int) -> bytes:
    """y = x doubled `trip` times by a Loop whose body is Mul then Identity (cond)."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["v", "two"], ["v_out"], name="double"),
         helper.make_node("Identity", ["cond"], ["cond_out"], name="keep_going")], "body",
        [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond", T.BOOL, []),
         helper.make_tensor_value_info("v", T.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("v_out", T.FLOAT, [2])],
        [helper.make_tensor("two", T.FLOAT, [], [2.0])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body)], "g",
        [helper.make_tensor_value_info("x", T.FLOAT, [2])], [helper.make_tensor_value_info("y", T.FLOAT, [2])],
        [helper.make_tensor("n", T.INT64, [], [trip])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_loop_body_nodes_are_profiled_each_iteration(tmp_path):
    sess = profiled_session(loop_model(4), tmp_path)
    y = sess.run(None, {"x": np.array([1, -1], np.float32)})[0]
    np.testing.assert_array_equal(y, [16, -16])
    events = json.loads(Path(sess.end_profiling()).read_text())
    check_chrome_trace(events)
    names = Counter(e["name"] for e in events if e["cat"] == "Node")
    assert names["loop_kernel_time"] == 1
    assert names["double_kernel_time"] == 4 and names["keep_going_kernel_time"] == 4
    loop = next(e for e in events if e["name"] == "loop_kernel_time")
    body = [e for e in events if e["name"] == "double_kernel_time"]
    assert all(loop["ts"] <= e["ts"] and e["ts"] + e["dur"] <= loop["ts"] + loop["dur"] + 1 for e in body)


def test_without_profiling_nothing_is_written(tmp_path):
    sess = ml.InferenceSession(loop_model(2))
    sess.run(None, {"x": np.ones(2, np.float32)})
    assert sess.end_profiling() == "" and sess.get_profiling_start_time_ns() == 0
    assert not list(tmp_path.iterdir())


def test_opencl_nodes_name_their_provider(tmp_path):
    from mlrt.native.providers import _base
    if "OpenCLExecutionProvider" not in _base.available():
        pytest.skip("the OpenCL provider is not available here")
    opencl = _base.available()["OpenCLExecutionProvider"]()
    try:
        opencl.cl_device
    except Exception as exc:  # noqa: BLE001 - whichever way the device is missing, say it
        pytest.skip(f"no usable OpenCL device: {exc}")
    sess = profiled_session(str(LIGHT / "light_squeezenet.onnx"), tmp_path,
                            providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    x = np.ones((1, 3, 224, 224), np.float32)
    sess.run(None, {"data_0": x})
    events = json.loads(Path(sess.end_profiling()).read_text())
    check_chrome_trace(events)
    by_provider = Counter(e["args"]["provider"] for e in events if e["cat"] == "Node")
    assert by_provider == Counter(a[2] for a in sess.get_node_assignment())
    assert by_provider["OpenCLExecutionProvider"] > 0


def test_profile_command_prints_op_types_and_nodes(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mlrt", "profile", str(LIGHT / "light_squeezenet.onnx"), "--runs", "2",
                          "--top", "3", "--prefix", str(tmp_path / "p")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "op type" in out.stdout and "MaxPool" in out.stdout and "ms per run" in out.stdout
    (trace,) = tmp_path.glob("p_*.json")
    check_chrome_trace(json.loads(trace.read_text()))
    bad = subprocess.run([sys.executable, "-m", "mlrt", "profile", str(tmp_path / "missing.onnx")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("mlrt profile: ") and len(bad.stderr.splitlines()) == 1


_KERNEL_PATHS = r"""
import json, os, sys, numpy as np
import mlrt.lowlevel as ml
for k, model in enumerate(sys.argv[2:]):
    so = ml.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = f"{sys.argv[1]}{k}"
    s = ml.InferenceSession(model, so)
    s.run(None, {i.name: np.ones(i.shape, np.float32) for i in s.get_inputs()})
    events = json.load(open(s.end_profiling()))
    print(json.dumps([[e["args"]["op_name"], e["args"].get("kernel_path")] for e in events if e["cat"] == "Node"]))
"""


def _elementwise_model(path):
    """Add (a broadcast row), Mul, Relu, x through float16 and back (Cast twice), Sum of
    two: the element-wise kernels, unfused."""
    from onnx import TensorProto, helper, numpy_helper
    nodes = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Mul", ["a", "x"], ["m"]),
             helper.make_node("Relu", ["m"], ["r"]), helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h"], ["c"], to=TensorProto.FLOAT), helper.make_node("Sum", ["r", "c"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 300])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 300])],
                          [numpy_helper.from_array(np.linspace(-1, 1, 300, dtype=np.float32), "b")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.mark.parametrize("isa", ["", "avx2", "portable"])
def test_nodes_name_the_kernel_path_they_ran(tmp_path, isa):
    """A Conv node's event names the path its kernel took and the instruction set
    ("conv/winograd/avx512"; MLRT_ISA=portable: im2col and OpenBLAS), Softmax, pooling,
    BatchNormalization, LRN, the element-wise kernels and Cast to and from float16 their
    loops' ("pool/avx2");
    nodes whose kernels name none (data movement: Concat, Reshape) carry no kernel_path.
    In a child: MLRT_ISA is read once."""
    from mlrt.native import _lib
    features = _lib.ffi().string(_lib.lib().mlrt_cpu_features()).decode().split()
    widest = "avx512" if "avx512f" in features else "avx2" if "avx2" in features else "portable"
    if isa == "avx2" and "avx2" not in features:
        pytest.skip("this CPU has no AVX2")
    env = dict(__import__("os").environ, MLRT_ISA=isa)
    models = [LIGHT / "light_squeezenet.onnx", LIGHT / "light_densenet121.onnx", LIGHT / "light_bvlc_alexnet.onnx",
              _elementwise_model(tmp_path / "elementwise.onnx")]
    out = subprocess.run([sys.executable, "-c", _KERNEL_PATHS, str(tmp_path / "p"), *map(str, models)], env=env,
                         capture_output=True, text=True, check=True).stdout
    squeeze, dense, alex, elementwise = (json.loads(line) for line in out.splitlines()[-4:])
    ran = isa or widest
    convs = [path for op, path in squeeze if op in ("Conv", "FusedConv", "FusedConvMaxPool")]
    assert len(convs) == 26 and all(convs), squeeze
    if ran == "portable":
        assert set(convs) == {"conv/im2col/blas"}
    else:
        assert all(p.startswith("conv/") and p.endswith("/" + ran) for p in convs), convs
        assert len({p.split("/")[1] for p in convs}) >= 2  # several of Conv's paths, each named
    assert [path for op, path in squeeze if op == "Softmax"] == [f"softmax/{ran}"]
    assert all(path is None for op, path in squeeze + dense if op in ("Concat", "Reshape"))
    loops = {"MaxPool": "pool", "AveragePool": "pool", "GlobalAveragePool": "pool", "BatchNormalization": "batchnorm",
             "Relu": "relu", "LRN": "lrn", "Add": "binary", "Mul": "binary", "Sum": "binary", "Cast": "cast"}
    named = [(op, path) for op, path in squeeze + dense + alex + elementwise if op in loops]
    assert {op for op, _ in named} == set(loops), named
    # (float16 conversions are F16C's, an AVX2-level extension: "cast/avx2" on AVX-512 too)
    want = {op: f"{family}/{'avx2' if op == 'Cast' and ran == 'avx512' else ran}" for op, family in loops.items()}
    assert all(path == want[op] for op, path in named), named
