"""Custom operators (docs/custom_ops.md): Python functions registered with
SessionOptions.register_custom_op, and C libraries loaded with
register_custom_ops_library (samples/custom_op_c, built here with the system compiler)."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt.lowlevel as ml

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "custom_op_c"
DOMAIN = "com.example"


def model(nodes, inputs, outputs, shape=(2, 3)):
    dims = None if shape is None else list(shape)
    g = helper.make_graph(nodes, "custom", [helper.make_tensor_value_info(n, T.FLOAT, dims) for n in inputs],
                          [helper.make_tensor_value_info(n, T.FLOAT, None) for n in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)])
    return m.SerializeToString()


def scale_model(**attributes):
    """y = Scale(relu(x)) + x, Scale a custom operator between two native ones."""
    return model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                  helper.make_node("Scale", ["r"], ["s"], domain=DOMAIN, name="scale", **attributes),
                  helper.make_node("Add", ["s", "x"], ["y"], name="add")], ["x"], ["y"])


def scale(x, factor=2.0):
    return (x * np.float32(factor)).astype(x.dtype)


def same(*types, **attributes):
    return types[0]


def session(compute, infer=None, m=None, op_type="Scale"):
    so = ml.SessionOptions()
    so.register_custom_op(DOMAIN, op_type, compute, infer)
    return ml.InferenceSession(m or scale_model(), so)


X = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)


# -- Python operators -----------------------------------------------------------------------
def test_python_op_runs_between_native_nodes():
    sess = session(scale, same)
    (y,) = sess.run(None, {"x": X})
    np.testing.assert_array_equal(y, np.maximum(X, 0) * 2 + X)
    assert [(n, p) for n, _, p in sess.get_node_assignment()] == [
        ("relu", "CPUExecutionProvider"), ("scale", "CPUExecutionProvider"), ("add", "CPUExecutionProvider")]


def test_attributes_are_keyword_arguments():
    seen = {}

    def compute(x, **attributes):
        seen.update(attributes)
        return scale(x, attributes["factor"])

    sess = session(compute, same, scale_model(factor=0.5, mode="fast", sizes=[1, 2]))
    (y,) = sess.run(None, {"x": X})
    np.testing.assert_array_equal(y, np.maximum(X, 0) * 0.5 + X)
    assert seen == {"factor": 0.5, "mode": "fast", "sizes": [1, 2]}


def test_several_outputs_and_infer_with_free_dims():
    m = model([helper.make_node("Split2", ["x"], ["a", "b"], domain=DOMAIN, name="split"),
               helper.make_node("Sub", ["a", "b"], ["y"], name="sub")], ["x"], ["y"], shape=(4, 3))

    def infer(t):
        dtype, shape = t
        return [(dtype, (shape[0] // 2, None)), (None, None)]

    sess = session(lambda x: (x[:2], x[2:]), infer, m, op_type="Split2")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x[:2] - x[2:])


def test_registration_is_per_session_options():
    so = ml.SessionOptions()
    op = so.register_custom_op(DOMAIN, "Scale", scale)
    assert isinstance(op, ml.CustomOp) and op.key == (DOMAIN, "Scale") and so.get_custom_ops() == [op]
    with pytest.raises(ml.NotImplemented, match="Scale"):
        ml.InferenceSession(scale_model())  # other options: no such operator


def test_reserved_domain_and_bad_arguments_are_refused():
    so = ml.SessionOptions()
    for domain in ("", "ai.onnx"):
        with pytest.raises(ml.InvalidArgument, match="domain"):
            so.register_custom_op(domain, "Relu", scale)
    with pytest.raises(ml.InvalidArgument, match="callable"):
        so.register_custom_op(DOMAIN, "Scale", "not a function")
    with pytest.raises(ml.InvalidArgument, match="infer"):
        so.register_custom_op(DOMAIN, "Scale", scale, infer=3)


def test_a_raising_function_names_the_node_and_the_session_stays_usable():
    def compute(x):
        if x.sum() > 100:
            raise ValueError("too large")
        return scale(x)

    sess = session(compute, same)
    with pytest.raises(ml.MlrtError, match=r"node 'scale' \(custom operator com.example::Scale\).*"
                                           r"ValueError: too large"):
        sess.run(None, {"x": X * 100})
    np.testing.assert_array_equal(sess.run(None, {"x": X})[0], np.maximum(X, 0) * 2 + X)


@pytest.mark.parametrize("compute, infer, message", [
    (lambda x: x.astype(np.float64), same, r"output 0 is float64, but infer said float32"),
    (lambda x: x[:1], same, r"output 0 has shape \[1, 3\], but infer said \[2, 3\]"),
    (lambda x: (x, x), None, r"compute returned 2 output\(s\), the node has 1"),
    (lambda x: [[1.0]], None, r"output 0 from compute is a list, not a numpy array"),
    (scale, lambda t: 42, r"infer must return \(dtype, shape\)"),
    (scale, lambda t: [t, t], r"infer returned 2 output type\(s\)"),
    (scale, lambda t: 1 / 0, r"its infer function raised ZeroDivisionError"),
])
def test_wrong_results_from_the_user_functions(compute, infer, message):
    sess = session(compute, infer)
    with pytest.raises(ml.MlrtError, match=r"node 'scale' .*" + message):
        sess.run(None, {"x": X})


def test_output_that_is_an_input_is_copied():
    sess = session(lambda x: x, same, model([helper.make_node("Scale", ["x"], ["y"], domain=DOMAIN, name="scale")],
                                            ["x"], ["y"]))
    x = X.copy()
    (y,) = sess.run(None, {"x": x})
    y[...] = 0
    np.testing.assert_array_equal(x, X)


# -- C libraries ---------------------------------------------------------------------------------
def _build_module():
    spec = importlib.util.spec_from_file_location("custom_op_c_build", SAMPLE / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builder():
    module = _build_module()
    if shutil.which(module.compiler()[0]) is None:
        pytest.skip(f"no C compiler ({module.compiler()[0]})")
    return module


@pytest.fixture(scope="module")
def library(builder, tmp_path_factory):
    return builder.build(tmp_path_factory.mktemp("custom_op_c"))


def c_model():
    nodes = [helper.make_node("MulAdd", ["a", "b", "c"], ["m"], domain=DOMAIN, name="muladd"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("RowSum", ["r"], ["y"], domain=DOMAIN, name="rowsum")]
    return model(nodes, ["a", "b", "c"], ["y"], shape=("N", 5))


def test_c_library_operators_run(library):
    so = ml.SessionOptions()
    so.register_custom_ops_library(str(library))
    assert [(op.domain, op.op_type, op.library) for op in so.get_custom_ops()] == [
        (DOMAIN, "MulAdd", str(library)), (DOMAIN, "RowSum", str(library))]
    sess = ml.InferenceSession(c_model(), so)
    rng = np.random.default_rng(7)
    for n in (1, 13):
        a, b, c = (rng.standard_normal((n, 5)).astype(np.float32) for _ in range(3))
        (y,) = sess.run(None, {"a": a, "b": b, "c": c})
        assert y.shape == (n,) and y.dtype == np.float32
        np.testing.assert_allclose(y, np.maximum(a * b + c, 0).sum(1), rtol=1e-5, atol=1e-6)


def test_c_library_errors_name_the_node_and_the_session_stays_usable(library):
    so = ml.SessionOptions()
    so.register_custom_ops_library(library)  # (a Path is taken too)
    m = model([helper.make_node("RowSum", ["x"], ["y"], domain=DOMAIN, name="rowsum")], ["x"], ["y"],
              shape=None)
    sess = ml.InferenceSession(m, so)
    with pytest.raises(ml.MlrtError, match=r"node 'rowsum' .*infer function .*failed with status 1: "
                                           r"RowSum takes one float32 matrix"):
        sess.run(None, {"x": np.ones((2, 3, 4), np.float32)})
    with pytest.raises(ml.MlrtError, match=r"node 'rowsum' .*float32 matrix"):
        sess.run(None, {"x": np.ones(6, np.float32)})
    np.testing.assert_array_equal(sess.run(None, {"x": np.ones((2, 3), np.float32)})[0], [3, 3])


def test_library_path_that_does_not_exist(tmp_path):
    with pytest.raises(ml.NoSuchFile, match="no file"):
        ml.SessionOptions().register_custom_ops_library(str(tmp_path / "missing.so"))


def test_library_that_is_not_a_shared_library(tmp_path):
    bogus = tmp_path / "bogus.so"
    bogus.write_text("not a library")
    with pytest.raises(ml.InvalidArgument, match="cannot be loaded as a shared library"):
        ml.SessionOptions().register_custom_ops_library(str(bogus))


def test_library_without_the_entry_point(builder, tmp_path):
    source = tmp_path / "no_entry.c"
    source.write_text("int some_function(void) { return 1; }\n")
    lib = builder.build(tmp_path, source, "libno_entry.so")
    with pytest.raises(ml.InvalidArgument, match="does not export mlrt_register_custom_ops"):
        ml.SessionOptions().register_custom_ops_library(str(lib))


def test_library_whose_entry_point_fails(builder, tmp_path):
    source = tmp_path / "failing.c"
    source.write_text('#include "mlrt.h"\n'
                      "int32_t mlrt_register_custom_ops(const mlrt_custom_op_api *api, void *registry) {\n"
                      '    api->set_error("needs a licence file");\n'
                      "    return MLRT_ERR_INVALID_ARGUMENT;\n}\n")
    lib = builder.build(tmp_path, source, "libfailing.so")
    so = ml.SessionOptions()
    with pytest.raises(ml.InvalidArgument, match="failed with status 1: needs a licence file"):
        so.register_custom_ops_library(str(lib))
    assert so.get_custom_ops() == []


def test_library_registering_a_reserved_domain(builder, tmp_path):
    source = tmp_path / "reserved.c"
    source.write_text('#include "mlrt.h"\n'
                      "static int f(void *u, const mlrt_tensor *i, int32_t n, mlrt_tensor *o, int32_t m) "
                      "{ return 0; }\n"
                      "int32_t mlrt_register_custom_ops(const mlrt_custom_op_api *api, void *registry) {\n"
                      '    mlrt_custom_op_def def = {"", "Relu", 0, f, 0};\n'
                      "    return api->register_op(registry, &def);\n}\n")
    lib = builder.build(tmp_path, source, "libreserved.so")
    with pytest.raises(ml.InvalidArgument, match="domain must be one of your own"):
        ml.SessionOptions().register_custom_ops_library(str(lib))


def test_the_python_sample_runs():
    done = subprocess.run([sys.executable, str(ROOT / "samples" / "custom_op_python.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the result matches numpy" in done.stdout
