"""mlrt.lowlevel as `onnxruntime` (lowlevel/_compat.py, lowlevel/_module_level.py): the module-level functions,
onnxruntime's exception names over mlrt's tree, and an app written for onnxruntime
giving the same results on both.

Installing changes sys.modules: the `installed` fixture puts back what was there, and
the app runs in child processes."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml
from mlrt.lowlevel import _module_level

STATE = "onnxruntime.capi.onnxruntime_pybind11_state"
FUNCTIONS = ["set_default_logger_severity", "set_default_logger_verbosity", "get_all_providers", "get_build_info",
             "set_seed", "disable_telemetry_events", "enable_telemetry_events", "has_collective_ops", "get_device",
             "get_available_providers", "get_version_string", "InferenceSession", "SessionOptions", "RunOptions",
             "OrtValue", "IOBinding", "NodeArg", "GraphOptimizationLevel", "ExecutionMode"]
EXCEPTIONS = {"Fail": mlrt.MlrtError, "RuntimeException": mlrt.MlrtError, "EngineError": mlrt.MlrtError,
              "ModelLoaded": mlrt.MlrtError, "InvalidArgument": mlrt.InvalidArgument,
              "NotImplemented": mlrt.NotImplemented, "InvalidGraph": mlrt.InvalidModel,
              "InvalidProtobuf": mlrt.InvalidModel, "NoModel": mlrt.InvalidModel, "NoSuchFile": mlrt.NoSuchFile,
              "EPFail": mlrt.DeviceError, "DeviceReset": mlrt.DeviceError, "NotFound": mlrt.MlrtError,
              "ModelLoadCanceled": mlrt.MlrtError, "ModelRequiresCompilation": mlrt.MlrtError}


def ort_modules() -> dict:
    return {n: m for n, m in sys.modules.items() if n == "onnxruntime" or n.startswith("onnxruntime.")}


@contextlib.contextmanager
def modules_restored():
    """sys.modules' onnxruntime entries, and mlrt.lowlevel without `capi`, as they were."""
    saved, had_capi = ort_modules(), hasattr(ml, "capi")
    try:
        yield
    finally:
        for name in ort_modules():
            del sys.modules[name]
        sys.modules.update(saved)
        if not had_capi:
            vars(ml).pop("capi", None)


@pytest.fixture
def installed():
    """mlrt.lowlevel installed as onnxruntime (over a real one this process may hold)."""
    with modules_restored():
        yield ml.install_as_onnxruntime(force=True)


def mlp(batch="N") -> onnx.ModelProto:
    """softmax(relu(x @ w + b)), x: float[batch, 4]."""
    rng = np.random.default_rng(12)
    inits = [onnx.numpy_helper.from_array(rng.standard_normal((4, 5)).astype(np.float32), "w"),
             onnx.numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", T.FLOAT, [batch, 4])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [batch, 5])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


# -- installing --------------------------------------------------------------------------------
def test_names_after_install(installed):
    import onnxruntime as ort
    import onnxruntime.capi.onnxruntime_pybind11_state as C
    from onnxruntime.capi import _pybind_state
    from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument

    assert installed is ml and ort is ml
    assert _pybind_state is C and ort.capi.onnxruntime_pybind11_state is C and ort.capi._pybind_state is C
    assert InvalidArgument is mlrt.InvalidArgument
    for name in FUNCTIONS:
        assert getattr(ort, name) is getattr(ml, name), name
        assert getattr(C, name) is getattr(ml, name), name
    for name, cls in EXCEPTIONS.items():
        assert getattr(C, name) is cls, name
    assert set(EXCEPTIONS) | set(FUNCTIONS) <= set(C.__all__)


def test_install_is_idempotent(installed):
    before = ort_modules()
    assert ml.install_as_onnxruntime() is ml
    assert ort_modules() == before


def test_refuses_a_real_onnxruntime_already_imported():
    with modules_restored():
        real = pytest.importorskip("onnxruntime")
        assert real is not ml
        with pytest.raises(mlrt.InvalidArgument, match="already imported.*force=True"):
            ml.install_as_onnxruntime()
        assert sys.modules["onnxruntime"] is real  # left as it was
        assert ml.install_as_onnxruntime(force=True) is ml
        assert sys.modules["onnxruntime"] is ml
        ours = (ml, ml.capi, ml.capi.onnxruntime_pybind11_state, ml.capi.onnxruntime_inference_collection,
                ml.capi.build_and_package_info, ml.backend)
        assert all(m in ours for m in ort_modules().values())


# -- exceptions ----------------------------------------------------------------------------------
def test_bad_input_name_caught_as_invalid_argument(installed):
    import onnxruntime

    sess = onnxruntime.InferenceSession(mlp().SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.ones((2, 4), np.float32)
    try:
        sess.run(None, {"x": x, "not_an_input": x})
    except onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument as exc:
        assert "not_an_input" in str(exc)
    else:
        pytest.fail("no error for an input name the model does not have")
    assert sess.run(None, {"x": x})[0].shape == (2, 5)  # still usable


def test_missing_file_caught_as_no_such_file(installed, tmp_path):
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, NoSuchFile

    path = tmp_path / "absent.onnx"
    for cls in (NoSuchFile, FileNotFoundError, mlrt.InvalidModel, Fail):
        with pytest.raises(cls, match="does not exist"):
            ml.InferenceSession(str(path))


def test_a_folder_is_not_a_missing_file(tmp_path):
    with pytest.raises(mlrt.InvalidModel, match="is a directory, not a model file") as info:
        ml.InferenceSession(str(tmp_path))
    assert not isinstance(info.value, mlrt.NoSuchFile)


@pytest.mark.parametrize("name", ["InvalidProtobuf", "InvalidGraph", "NoModel", "Fail"])
def test_malformed_bytes_caught(installed, name):
    import onnxruntime.capi.onnxruntime_pybind11_state as C

    with pytest.raises(getattr(C, name)):
        ml.InferenceSession(b"\x08\x07garbage\xff\xff")


def test_unsupported_operator_caught_as_not_implemented(installed):
    import onnxruntime.capi.onnxruntime_pybind11_state as C

    node = helper.make_node("NoSuchOp", ["x"], ["y"], domain="example.custom")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("example.custom", 1)])
    with pytest.raises(C.NotImplemented, match="NoSuchOp"):
        ml.InferenceSession(m.SerializeToString()).run(None, {"x": np.ones(1, np.float32)})


# -- module-level functions ------------------------------------------------------------------------
@pytest.fixture
def mlrt_logger_level():
    logger = logging.getLogger("mlrt")
    level = logger.level
    yield logger
    logger.setLevel(level)


@pytest.mark.parametrize("severity, level", [(0, logging.DEBUG), (1, logging.INFO), (2, logging.WARNING),
                                             (3, logging.ERROR), (4, logging.CRITICAL)])
def test_logger_severity_sets_the_mlrt_logger(mlrt_logger_level, severity, level):
    ml.set_default_logger_severity(severity)
    assert mlrt_logger_level.level == level


@pytest.mark.parametrize("bad", [-1, 5, "2", 2.0, None])
def test_bad_logger_severity(mlrt_logger_level, bad):
    mlrt_logger_level.setLevel(logging.ERROR)
    with pytest.raises(mlrt.InvalidArgument, match="severity"):
        ml.set_default_logger_severity(bad)
    assert mlrt_logger_level.level == logging.ERROR  # unchanged


def test_logger_verbosity_is_kept(monkeypatch):
    monkeypatch.setattr(_module_level, "_verbosity", 0)
    ml.set_default_logger_verbosity(3)
    assert _module_level._verbosity == 3
    for bad in (-1, "1", 1.5):
        with pytest.raises(mlrt.InvalidArgument, match="verbosity"):
            ml.set_default_logger_verbosity(bad)
    assert _module_level._verbosity == 3


def test_seed_is_kept(monkeypatch):
    monkeypatch.setattr(_module_level, "_seed", None)
    ml.set_seed(-3)
    assert _module_level._seed == -3
    ml.set_seed(np.int64(7))
    assert _module_level._seed == 7
    with pytest.raises(mlrt.InvalidArgument, match="seed"):
        ml.set_seed("x")
    assert _module_level._seed == 7


def test_providers_build_info_and_the_rest():
    providers = ml.get_all_providers()
    assert set(ml.get_available_providers()) <= set(providers) and "CPUExecutionProvider" in providers
    assert len(providers) == len(set(providers)) and providers[-1] == "CPUExecutionProvider"
    assert "CUDAExecutionProvider" in providers and "OpenCLExecutionProvider" in providers
    rt = mlrt.distribution.current_runtime()
    info = ml.get_build_info()
    assert f"version={mlrt.__version__}" in info and f"runtime={rt.kind}" in info and str(rt.path) in info
    assert "build=" in info and "build=unknown" not in info  # (the flags may say -Wno-unknown-...)
    assert ml.has_collective_ops() is False
    assert ml.disable_telemetry_events() is None and ml.enable_telemetry_events() is None
    assert ml.get_device() == "CPU"


# -- an app written for onnxruntime -------------------------------------------------------------------
APP = """\
import sys

import numpy as np
import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument, NoSuchFile

model, out = sys.argv[1], sys.argv[2]
ort.set_default_logger_severity(3)
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
(y,) = sess.run(None, {sess.get_inputs()[0].name: x})
np.save(out, y)
try:
    sess.run(None, {"x": x, "not_an_input": x})
except InvalidArgument:
    print("InvalidArgument caught")
try:
    ort.InferenceSession(model + ".missing", providers=["CPUExecutionProvider"])
except NoSuchFile:
    print("NoSuchFile caught")
print(ort.get_device(), sess.get_providers())
print([(i.name, i.type, i.shape) for i in sess.get_inputs()], [(o.name, o.type, o.shape) for o in sess.get_outputs()])
print(ort.__name__)
"""

# runs the app (argv[1:]) with mlrt installed as onnxruntime first
WITH_MLRT = textwrap.dedent("""\
    import runpy, sys
    import mlrt.lowlevel
    mlrt.lowlevel.install_as_onnxruntime()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
""")


def test_an_onnxruntime_app_runs_unchanged(tmp_path):
    pytest.importorskip("onnxruntime")
    model, app = tmp_path / "mlp.onnx", tmp_path / "app.py"
    onnx.save(mlp(), model)
    app.write_text(APP)
    outputs = {}
    for runtime, launch in (("onnxruntime", [str(app)]), ("mlrt", ["-c", WITH_MLRT, str(app)])):
        out = tmp_path / f"{runtime}.npy"
        done = subprocess.run([sys.executable, *launch, str(model), str(out)], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{runtime}:\n{done.stderr}"
        outputs[runtime] = done.stdout.splitlines(), np.load(out)
    (ort_lines, ort_y), (mlrt_lines, mlrt_y) = outputs["onnxruntime"], outputs["mlrt"]
    assert ort_lines[-1] == "onnxruntime" and mlrt_lines[-1] == "mlrt.lowlevel"  # each ran where it should
    assert ort_lines[:-1] == mlrt_lines[:-1]
    assert ort_lines[:2] == ["InvalidArgument caught", "NoSuchFile caught"]
    np.testing.assert_allclose(mlrt_y, ort_y, rtol=1e-5, atol=1e-6)


def test_inference_collection_submodule(installed):
    """Apps import the session classes from onnxruntime.capi.onnxruntime_inference_collection."""
    from onnxruntime.capi.onnxruntime_inference_collection import InferenceSession, IOBinding, OrtValue

    assert (InferenceSession, IOBinding, OrtValue) == (ml.InferenceSession, ml.IOBinding, ml.OrtValue)
    import onnxruntime.capi.onnxruntime_inference_collection as coll
    assert coll.SessionOptions is ml.SessionOptions and coll.NodeArg is ml.NodeArg
