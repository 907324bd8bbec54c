"""The rest of onnxruntime 1.32's Python surface (lowlevel/_compile.py, _providers.py,
_enum.py, the raw-pointer IOBinding calls and the onnxruntime.backend and
build_and_package_info modules), each held against onnxruntime where it runs."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt
import mlrt.lowlevel as ml

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle these cases are held against")

W = np.random.default_rng(3).standard_normal((8, 300)).astype(np.float32)  # 9.6 KB


def dense(path) -> str:
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "d",
                          [helper.make_tensor_value_info("x", T.FLOAT, ["n", 8])],
                          [helper.make_tensor_value_info("y", T.FLOAT, ["n", 300])], [numpy_helper.from_array(W, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return str(path)


X = np.random.default_rng(4).random((2, 8), dtype=np.float32)
WANT = np.maximum(X @ W, 0)


def test_model_compiler_writes_what_both_load(tmp_path):
    src = dense(tmp_path / "d.onnx")
    out = tmp_path / "out" / "d.ctx.onnx"
    out.parent.mkdir()
    ml.ModelCompiler(ml.SessionOptions(), src, external_initializers_file_path="d.ctx.bin",
                     external_initializers_size_threshold=1024).compile_to_file(str(out))
    assert sorted(os.listdir(out.parent)) == ["d.ctx.bin", "d.ctx.onnx"]
    assert os.path.getsize(out.parent / "d.ctx.bin") >= W.nbytes
    theirs = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": X})[0]
    ours = ml.InferenceSession(str(out)).run(None, {"x": X})[0]
    np.testing.assert_allclose(theirs, WANT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours, WANT, rtol=1e-5, atol=1e-6)
    # bytes in, bytes out, and the stream form
    data = ml.ModelCompiler(ml.SessionOptions(), open(src, "rb").read()).compile_to_bytes()
    np.testing.assert_allclose(ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": X})[0],
                               WANT, rtol=1e-5, atol=1e-6)
    chunks = []
    ml.ModelCompiler(ml.SessionOptions(), src).compile_to_stream(chunks.append)
    assert onnx.load_from_string(b"".join(chunks)).graph.node[0].op_type == "MatMul"


def test_model_compiler_optimizes_at_the_level_asked(tmp_path):
    src = dense(tmp_path / "d.onnx")
    ml.ModelCompiler(ml.SessionOptions(), src, graph_optimization_level=ml.GraphOptimizationLevel.ORT_ENABLE_ALL) \
        .compile_to_file(str(tmp_path / "all.onnx"))
    np.testing.assert_allclose(ort.InferenceSession(str(tmp_path / "all.onnx"), providers=["CPUExecutionProvider"])
                               .run(None, {"x": X})[0], WANT, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("flag,words", [("ERROR_IF_OUTPUT_FILE_EXISTS", "exists already"),
                                        ("ERROR_IF_NO_NODES_COMPILED", "Unable to compile any nodes")])
def test_model_compiler_flags_fail_as_onnxruntime(tmp_path, flag, words):
    src = dense(tmp_path / "d.onnx")
    target = src if flag == "ERROR_IF_OUTPUT_FILE_EXISTS" else str(tmp_path / "new.onnx")
    with pytest.raises(Exception, match=words):
        ort.ModelCompiler(ort.SessionOptions(), src, flags=getattr(ort.OrtCompileApiFlags, flag)).compile_to_file(
            target)
    with pytest.raises(mlrt.MlrtError, match=words):
        ml.ModelCompiler(ml.SessionOptions(), src, flags=getattr(ml.OrtCompileApiFlags, flag)).compile_to_file(target)
    assert not os.path.exists(tmp_path / "new.onnx")


def test_model_compiler_refuses_what_it_cannot_take(tmp_path):
    with pytest.raises(ml.InvalidArgument, match="Input model path is empty"):
        ml.ModelCompiler(ml.SessionOptions(), "")
    with pytest.raises(ml.InvalidArgument, match="Unable to load from type"):
        ml.ModelCompiler(ml.SessionOptions(), 3)
    with pytest.raises(mlrt.NoSuchFile):
        ml.ModelCompiler(ml.SessionOptions(), str(tmp_path / "none.onnx")).compile_to_file(str(tmp_path / "o.onnx"))
    with pytest.raises(ml.NotImplemented, match="get_initializer_location_func"):
        ml.ModelCompiler(ml.SessionOptions(), dense(tmp_path / "d.onnx"), get_initializer_location_func=print)


@pytest.mark.parametrize("name", ["ModelPackage", "ModelPackageOptions", "ModelPackageContext",
                                  "ModelPackageComponentContext", "OrtEpContextData", "OrtEpContextDataBuffer",
                                  "OrtSyncStream"])
def test_refused_classes_say_why(name):
    with pytest.raises(ml.NotImplemented, match=name + ": mlrt"):
        getattr(ml, name)()


def test_external_initializer_info():
    theirs, ours = ort.OrtExternalInitializerInfo("a.bin", 16, 32), ml.OrtExternalInitializerInfo("a.bin", 16, 32)
    assert (ours.filepath, ours.file_offset, ours.byte_size) == (theirs.filepath, theirs.file_offset, theirs.byte_size)


@pytest.mark.parametrize("name", ["GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder", "OrtSparseFormat",
                                  "OrtMemType", "OrtAllocatorType", "OrtCompileApiFlags", "ModelPackageWriteMode"])
def test_enums_print_as_onnxruntimes(name):
    theirs, ours = getattr(ort, name), getattr(ml, name)
    for member, value in theirs.__members__.items():
        assert str(getattr(ours, member)) == str(value) and f"{getattr(ours, member)}" == f"{value}"
        assert int(getattr(ours, member)) == int(value)


def test_iobinding_by_address(tmp_path):
    """onnxruntime's documented bind_input / bind_output with buffer_ptr, on host memory."""
    session = ml.InferenceSession(dense(tmp_path / "d.onnx"))
    x = ml.OrtValue.ortvalue_from_numpy(X)
    y = np.zeros((2, 300), np.float32)
    binding = session.io_binding()
    binding.bind_input("x", "cpu", 0, np.float32, list(X.shape), x.data_ptr())
    binding.bind_output("y", "cpu", 0, np.float32, [2, 300], y.ctypes.data)
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(y, WANT, rtol=1e-5, atol=1e-6)  # written where it was bound
    with pytest.raises(ml.NotImplemented, match="raw pointer into cuda memory"):
        binding.bind_input("x", "cuda", 0, np.float32, [2, 8], x.data_ptr())
    with pytest.raises(ml.InvalidArgument, match="is not an address"):
        binding.bind_input("x", "cpu", 0, np.float32, [2, 8], 0)
    with pytest.raises(ml.InvalidArgument, match="negative"):
        binding.bind_output("y", "cpu", 0, np.float32, [-1, 300], y.ctypes.data)


def test_backend_module_as_onnxruntimes(tmp_path):
    from mlrt.lowlevel._compat import _submodules
    import onnxruntime.backend as theirs
    ours = _submodules(ml)["onnxruntime.backend"]
    src = dense(tmp_path / "d.onnx")
    for backend in (theirs, ours):
        np.testing.assert_allclose(backend.prepare(src, "CPU").run(X)[0], WANT, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(backend.run(onnx.load(src), X)[0], WANT, rtol=1e-5, atol=1e-6)
        assert backend.supports_device("CPU") and backend.is_compatible(onnx.load(src))
    assert ours.is_opset_supported(onnx.load(src)) == (True, "")
    future = onnx.load(src)
    future.opset_import[0].version = 999
    supported, why = ours.is_opset_supported(future)
    assert not supported and "opset 999" in why
    with pytest.raises(AttributeError):
        ours.no_such_name


def test_build_and_package_info():
    from mlrt.lowlevel._compat import _submodules
    info = _submodules(ml)["onnxruntime.capi.build_and_package_info"]
    assert info.package_name == "mlrt" and info.cuda_version == "" and info.__version__ == ml.__version__


def test_graph_assignment_info_one_subgraph_per_cpu_node():
    """onnxruntime's CPU provider takes each node as a subgraph of its own: so does mlrt's report."""
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["a"], name="r1"), helper.make_node("Sigmoid", ["a"], ["b"]),
                           helper.make_node("Add", ["b", "x"], ["y"], name="add")], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    reports = []
    for rt in (ml, ort):
        so = rt.SessionOptions()
        so.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        info = rt.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]) \
            .get_provider_graph_assignment_info()
        reports.append([(s.ep_name, [(n.name, n.op_type, n.domain) for n in s.get_nodes()]) for s in info])
    assert reports[0] == reports[1] and len(reports[0]) == 3
