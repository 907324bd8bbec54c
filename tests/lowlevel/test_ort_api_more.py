"""The rest of onnxruntime's API (devices, memory infos, sparse tensors, run_async, load
cancellation, module-level names), compared with the real onnxruntime where both run
the same thing, and the dir() comparison with an explicit allow-list."""

import subprocess
import sys
import textwrap
import threading

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
import mlrt.lowlevel as ml


def _model(shape=(3, 3)) -> bytes:
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", T.FLOAT, list(shape))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _device(d):
    return d.device_id(), d.device_type(), d.device_vendor_id(), d.device_mem_type()


@pytest.mark.parametrize("name, device_id, vendor", [("cpu", 0, -1), ("gpu", 0, -1), ("gpu", 1, 0x8086), ("npu", 0, -1),
                                                     ("cuda", 0, -1), ("dml", 2, -1), ("cann", 0, -1), ("webgpu", 0, -1)])
def test_ortdevice_matches_onnxruntime(name, device_id, vendor):
    assert _device(ml.OrtDevice.make(name, device_id, vendor)) == _device(ort.OrtDevice.make(name, device_id, vendor))


def test_ortdevice_mlrt_names():
    if "OpenCLExecutionProvider" not in ml.get_available_providers():
        pytest.skip("the OpenCL provider is not installed here: 'opencl' is its device's name")
    assert _device(ml.OrtDevice.make("opencl", 0)) == _device(ort.OrtDevice.make("gpu", 0))
    with pytest.raises(mlrt.InvalidArgument, match="Unsupported device type"):
        ml.OrtDevice.make("tpu", 0)
    assert ml.OrtDevice.make("cpu", 0) == ml.OrtDevice.make("cpu", 0)


def _info(m):
    return m.name, m.device_id, int(m.mem_type), int(m.allocator_type), int(m.device_mem_type), m.device_vendor_id


@pytest.mark.parametrize("name", ["Cpu", "Cuda", "CudaPinned", "DML"])
@pytest.mark.parametrize("alloc, mem", [("ORT_ARENA_ALLOCATOR", "DEFAULT"), ("ORT_DEVICE_ALLOCATOR", "CPU_INPUT")])
def test_memory_info_matches_onnxruntime(name, alloc, mem):
    mine = ml.OrtMemoryInfo(name, getattr(ml.OrtAllocatorType, alloc), 1, getattr(ml.OrtMemType, mem))
    theirs = ort.OrtMemoryInfo(name, getattr(ort.OrtAllocatorType, alloc), 1, getattr(ort.OrtMemType, mem))
    assert _info(mine) == _info(theirs)
    assert mine.mem_type.name == theirs.mem_type.name and mine.allocator_type.name == theirs.allocator_type.name


def test_memory_info_v2_and_enums():
    args = ("Mine", 1, 0x8086, 2, 5, 0, 0)
    mine = ml.OrtMemoryInfo.create_v2(*args[:1], ml.OrtMemoryInfoDeviceType.GPU, *args[2:4],
                                      ml.OrtDeviceMemoryType.HOST_ACCESSIBLE, 0, ml.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
    theirs = ort.OrtMemoryInfo.create_v2(*args[:1], ort.OrtMemoryInfoDeviceType.GPU, *args[2:4],
                                         ort.OrtDeviceMemoryType.HOST_ACCESSIBLE, 0,
                                         ort.OrtAllocatorType.ORT_DEVICE_ALLOCATOR)
    assert _info(mine) == _info(theirs)
    with pytest.raises(mlrt.InvalidArgument, match="CreateMemoryInfo_V2"):
        ml.OrtMemoryInfo("Foo", ml.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ml.OrtMemType.DEFAULT)
    for name in ("OrtMemType", "OrtAllocatorType", "OrtSparseFormat", "OrtMemoryInfoDeviceType", "OrtDeviceMemoryType",
                 "OrtDeviceVendorId", "OrtHardwareDeviceType", "OrtExecutionProviderDevicePolicy",
                 "GraphOptimizationLevel"):
        assert {k: int(v) for k, v in getattr(ml, name).__members__.items()} == \
               {k: int(v) for k, v in getattr(ort, name).__members__.items()}, name


def test_arena_cfg_as_onnxruntime():
    keys = ["arena_extend_strategy", "initial_chunk_size_bytes", "initial_growth_chunk_size_bytes",
            "max_dead_bytes_per_chunk", "max_mem", "max_power_of_two_extend_bytes"]
    for args in [(1, 2, 3, 4), ({"max_mem": 16, "arena_extend_strategy": 1},)]:
        assert [getattr(ml.OrtArenaCfg(*args), k) for k in keys] == [getattr(ort.OrtArenaCfg(*args), k) for k in keys]
    with pytest.raises(mlrt.InvalidArgument, match="bogus"):
        ml.OrtArenaCfg({"bogus": 1})
    info = ml.OrtMemoryInfo("Cpu", ml.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ml.OrtMemType.DEFAULT)
    assert ml.create_and_register_allocator(info, ml.OrtArenaCfg(0, -1, -1, -1)) is None
    assert ml.create_and_register_allocator_v2("CPUExecutionProvider", info, {}, None) is None


def test_ep_devices_and_session_queries():
    m = _model()
    s, r = ml.InferenceSession(m), ort.InferenceSession(m)
    assert [_info(i) for i in s.get_input_memory_infos()] == [_info(i) for i in r.get_input_memory_infos()]
    assert [_info(i) for i in s.get_output_memory_infos()] == [_info(i) for i in r.get_output_memory_infos()]
    mine, theirs = s.get_input_epdevices(), r.get_input_epdevices()
    assert len(mine) == len(theirs) == 1
    assert (mine[0].ep_name, int(mine[0].device.type)) == (theirs[0].ep_name, int(theirs[0].device.type))
    assert ml.get_ep_devices()[0].ep_name == "CPUExecutionProvider"
    assert _info(ml.get_ep_devices()[0].memory_info(ml.OrtDeviceMemoryType.DEFAULT)) == _info(
        r.get_input_memory_infos()[0])
    assert s.get_tuning_results() == r.get_tuning_results() == []
    assert s.set_tuning_results([]) is None and s.set_ep_dynamic_options({"a": "b"}) is None
    assert s.release_captured_graph() is None
    with pytest.raises(ml.MlrtError, match="record_ep_graph_assignment_info"):
        s.get_provider_graph_assignment_info()
    so, rso = ml.SessionOptions(), ort.SessionOptions()
    for o in (so, rso):
        o.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    got = ml.InferenceSession(m, so).get_provider_graph_assignment_info()
    want = ort.InferenceSession(m, rso).get_provider_graph_assignment_info()
    assert [(g.ep_name, [(n.op_type, n.domain) for n in g.get_nodes()]) for g in got] == \
           [(g.ep_name, [(n.op_type, n.domain) for n in g.get_nodes()]) for g in want]


def _async(sess, feed, output_names=None):
    done, box = threading.Event(), {}

    def callback(results, user_data, err):
        box.update(results=results, user_data=user_data, err=err, main=threading.current_thread() is
                   threading.main_thread())
        done.set()

    assert sess.run_async(output_names, feed, callback, "data") is None
    assert done.wait(30)
    return box


def test_run_async_matches_onnxruntime():
    m = _model()
    x = np.arange(-4, 5, dtype=np.float32).reshape(3, 3)
    got, want = _async(ml.InferenceSession(m), {"x": x}), _async(ort.InferenceSession(m), {"x": x})
    assert got["err"] == want["err"] == "" and got["user_data"] == want["user_data"] == "data"
    assert not got["main"] and not want["main"]  # called from another thread
    np.testing.assert_array_equal(got["results"][0], want["results"][0])
    bad = {"x": np.ones((2, 3), np.float32)}
    got, want = _async(ml.InferenceSession(m), bad, ["y"]), _async(ort.InferenceSession(m), bad, ["y"])
    assert got["results"] == want["results"] == [] and got["err"] and want["err"]
    with pytest.raises(mlrt.InvalidArgument, match="missing"):
        ml.InferenceSession(m).run_async(None, {}, lambda *a: None, None)


def test_load_cancellation_and_plugin_eps():
    so = ml.SessionOptions()
    so.set_load_cancellation_flag(True)
    with pytest.raises(ml.MlrtError, match="canceled"):
        ml.InferenceSession(_model(), so)
    # the name onnxruntime apps catch is that class:
    from mlrt.lowlevel._compat import ORT_EXCEPTIONS
    with pytest.raises(ORT_EXCEPTIONS["ModelLoadCanceled"]):
        ml.InferenceSession(_model(), so)
    so.set_load_cancellation_flag(False)
    ml.InferenceSession(_model(), so)
    assert so.has_providers() is False and ort.SessionOptions().has_providers() is False
    for call in (lambda: so.add_provider("CPUExecutionProvider", {}), lambda: so.add_provider_for_devices([], {}),
                 lambda: so.set_provider_selection_policy(ml.OrtExecutionProviderDevicePolicy.PREFER_CPU),
                 lambda: so.set_provider_selection_policy_delegate(lambda *a: []),
                 lambda: ml.register_execution_provider_library("x", "/nonexistent.so"),
                 lambda: ml.unregister_execution_provider_library("x")):
        with pytest.raises(mlrt.NotImplemented, match="plugin execution providers"):
            call()
    # ORT_ENABLE_LAYOUT runs (as ORT_ENABLE_EXTENDED)
    so = ml.SessionOptions()
    so.graph_optimization_level = ml.GraphOptimizationLevel.ORT_ENABLE_LAYOUT
    x = np.ones((3, 3), np.float32)
    np.testing.assert_array_equal(ml.InferenceSession(_model(), so).run(None, {"x": x})[0], x)


def _coo(mod, values, indices, shape=(3, 3)):
    return mod.SparseTensor.sparse_coo_from_numpy(list(shape), values, indices, mod.OrtDevice.make("cpu", 0))


def test_sparse_coo_round_trip_matches_onnxruntime():
    values = np.array([1.5, -2, 3], np.float32)
    for indices in (np.array([1, 4, 7], np.int64), np.array([[0, 1], [1, 1], [2, 1]], np.int64)):
        a, b = _coo(ml, values, indices), _coo(ort, values, indices)
        assert int(a.format()) == int(b.format()) and a.format().name == b.format().name
        assert a.dense_shape() == b.dense_shape() and a.data_type() == b.data_type() == "sparse_tensor(float)"
        assert a.device_name() == b.device_name() == "cpu"
        np.testing.assert_array_equal(a.values(), b.values())
        np.testing.assert_array_equal(a.as_coo_view().indices(), b.as_coo_view().indices())
        assert np.shares_memory(a.values(), values)  # numeric values are not copied, as in onnxruntime
        with pytest.raises(mlrt.InvalidArgument, match="CSR"):
            a.as_csrc_view()
        with pytest.raises(mlrt.InvalidArgument, match="BlockSparse"):
            a.as_blocksparse_view()
        va, vb = ml.OrtValue.ort_value_from_sparse_tensor(a), ort.OrtValue.ort_value_from_sparse_tensor(b)
        for name in ("is_sparse_tensor", "is_tensor", "data_type", "device_name", "shape", "element_type",
                     "has_value", "is_tensor_sequence"):
            assert getattr(va, name)() == getattr(vb, name)(), name
        np.testing.assert_array_equal(va.as_sparse_tensor().values(), vb.as_sparse_tensor().values())
        with pytest.raises(mlrt.InvalidArgument, match="sparse"):
            va.numpy()
    strings = _coo(ml, np.array(["a", "b"]), np.array([0, 3], np.int64), (4,))
    assert strings.data_type() == _coo(ort, np.array(["a", "b"]), np.array([0, 3], np.int64), (4,)).data_type()
    with pytest.raises(mlrt.InvalidArgument, match="values"):
        _coo(ml, values, np.array([1, 4], np.int64))
    with pytest.raises(mlrt.NotImplemented, match="CUDA"):
        _coo(ml, values, np.array([1, 4, 7], np.int64)).to_cuda(ml.OrtDevice.make("cuda", 0))


def test_sparse_csr_round_trip_matches_onnxruntime():
    values, inner, outer = np.array([1., 2., 3.], np.float64), np.array([1, 0, 2], np.int64), np.array([0, 1, 1, 3])
    a = ml.SparseTensor.sparse_csr_from_numpy([3, 3], values, inner, outer, ml.OrtDevice.make("cpu", 0))
    b = ort.SparseTensor.sparse_csr_from_numpy([3, 3], values, inner, outer.astype(np.int64),
                                               ort.OrtDevice.make("cpu", 0))
    assert a.format().name == b.format().name == "ORT_SPARSE_CSRC" and a.data_type() == b.data_type()
    np.testing.assert_array_equal(a.as_csrc_view().inner(), b.as_csrc_view().inner())
    np.testing.assert_array_equal(a.as_csrc_view().outer(), b.as_csrc_view().outer())
    with pytest.raises(mlrt.InvalidArgument, match="COO"):
        a.as_coo_view()
    np.testing.assert_array_equal(a._dense(), [[0, 1, 0], [0, 0, 0], [2, 0, 3]])


def test_sparse_fed_to_a_dense_input_is_densified():
    values, indices = np.array([1., -2., 3.], np.float32), np.array([1, 4, 8], np.int64)
    st = _coo(ml, values, indices)
    dense = np.zeros(9, np.float32)
    dense[indices] = values
    want = ort.InferenceSession(_model()).run(None, {"x": dense.reshape(3, 3)})[0]
    s = ml.InferenceSession(_model())
    np.testing.assert_array_equal(s.run(None, {"x": ml.OrtValue.ort_value_from_sparse_tensor(st)})[0], want)
    np.testing.assert_array_equal(s.run(None, {"x": st})[0], want)
    out = s.run_with_ort_values(None, {"x": ml.OrtValue.ort_value_from_sparse_tensor(st)})[0]
    np.testing.assert_array_equal(out.numpy(), want)
    with pytest.raises(mlrt.NotImplemented, match="no memory on the cuda device"):
        ml.SparseTensor.sparse_coo_from_numpy([3, 3], values, indices, ml.OrtDevice.make("cuda", 0))


def test_sparse_tensor_model_input_refused():
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                          [helper.make_sparse_tensor_value_info("x", T.FLOAT, [3, 3])],
                          [helper.make_sparse_tensor_value_info("y", T.FLOAT, [3, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    st = _coo(ml, np.array([1.], np.float32), np.array([0], np.int64))
    with pytest.raises(mlrt.MlrtError):  # NotImplemented when made or when fed, never a wrong answer
        ml.InferenceSession(m).run(None, {"x": ml.OrtValue.ort_value_from_sparse_tensor(st)})


def test_module_level_names(capsys):
    assert ml.cuda_version == ort.cuda_version == ""
    assert ml.version == ml.__version__ == f"1.32.0+mlrt.{mlrt.__version__}" and ml.package_name == "mlrt"
    assert ml.preload_dlls() is None and ml.set_global_thread_pool_sizes(2, 2) is None
    with pytest.raises(mlrt.InvalidArgument):
        ml.set_global_thread_pool_sizes(-1)
    ml.print_debug_info()
    assert "mlrt version" in capsys.readouterr().out
    a, b = ml.OrtValue.ortvalue_from_numpy(np.arange(3, dtype=np.float32)), ml.OrtValue.ortvalue_from_numpy(
        np.zeros(3, np.float32))
    ml.copy_tensors([a], [b])
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    s = ml.InferenceSession(_model())
    binding = ml.SessionIOBinding(s)
    binding.bind_cpu_input("x", np.ones((3, 3), np.float32))
    binding.bind_output("y")
    s.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], np.ones((3, 3), np.float32))
    got = []
    ml.set_default_logger_callback(lambda *args: got.append(args), 0)
    try:
        ml.InferenceSession(_model())  # logs "session ready" at INFO
    finally:
        ml.set_default_logger_callback(None)
        ml.set_default_logger_severity(2)
    assert any(sev == 1 and "session ready" in msg for sev, _, _, _, msg in got)


def test_pybind_state_names():
    code = """
        import mlrt.lowlevel
        mlrt.lowlevel.install_as_onnxruntime()
        from onnxruntime.capi._pybind_state import (OrtValueVector, SparseCooView, SparseCsrView, OrtDevice,
            SparseBlockSparseView, ModelLoadCanceled, OrtMemoryInfo, SessionIOBinding, kSameAsRequested)
        from onnxruntime.capi.onnxruntime_inference_collection import OrtDevice, SparseTensor, OrtDeviceVendorId
        v = OrtValueVector(); v.push_back(mlrt.lowlevel.OrtValue.ortvalue_from_numpy(__import__("numpy").ones(2)))
        print(v.element_type_at(0), int(kSameAsRequested))
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["11", "1"]


# Public names onnxruntime 1.32 has and mlrt.lowlevel does not, each with why.  The test
# below fails when one is added (drop it here) or when onnxruntime gains one (decide).
MISSING_ALLOWED = {
    "module": {
        # onnxruntime's import machinery, not API
        "contextlib", "import_capi_exception", "onnxruntime_validation",
    },
    "state": {
        # model compatibility checks for compiled (EPContext) models and plugin EP devices
        "OrtCompiledModelCompatibility", "OrtDeviceEpIncompatibilityReason", "get_compatibility_info_from_model",
        "get_compatibility_info_from_model_bytes", "get_model_compatibility_for_ep_devices",
        "get_hardware_device_ep_incompatibility_details", "get_hardware_devices", "get_registered_ep_kernel_defs",
        # onnxruntime's C++ internals its Python layer wraps (mlrt's classes are the Python ones)
        "SessionObjectInitializer", "get_default_session_options", "get_session_initializer",
        # operator schema / kernel registry introspection (onnx.defs has the schemas)
        "get_all_operator_schema", "get_all_opkernel_def", "opkernel", "schemadef",
        # weight packing for onnxruntime's own quantized CUDA/CPU kernels
        "pack_fp4_weights_for_cuda_moe_gemm", "quantize_matmul_2bits", "quantize_matmul_4bits",
        "quantize_matmul_8bits", "quantize_matmul_bnb4", "quantize_qdq_matmul_2bits", "quantize_qdq_matmul_4bits",
        # modules the extension imports, not API
        "os", "platform", "warnings",
    },
    # pybind11 enum classes list name/value in dir(); mlrt's IntEnum members have .name and .value
    "GraphOptimizationLevel": {"name", "value"}, "ExecutionMode": {"name", "value"},
    "ExecutionOrder": {"name", "value"},
}


def _pub(o):
    return {n for n in dir(o) if not n.startswith("_")}


def test_dir_matches_onnxruntime_but_the_allow_list():
    code = """
        import json, numpy as np, onnxruntime as ort
        from onnxruntime.capi import _pybind_state
        from onnx import helper, TensorProto as T
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "a",
                              [helper.make_tensor_value_info("x", T.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [1])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
        s = ort.InferenceSession(m)
        x = ort.OrtValue.ortvalue_from_numpy(np.ones(1, np.float32))
        objs = {"module": ort, "state": _pybind_state, "InferenceSession": s, "SessionOptions": ort.SessionOptions(),
                "RunOptions": ort.RunOptions(), "OrtValue": x, "IOBinding": s.io_binding(), "NodeArg": s.get_inputs()[0],
                "ModelMetadata": s.get_modelmeta(), "OrtDevice": ort.OrtDevice, "OrtMemoryInfo": ort.OrtMemoryInfo,
                "SparseTensor": ort.SparseTensor, "GraphOptimizationLevel": ort.GraphOptimizationLevel,
                "ExecutionMode": ort.ExecutionMode, "ExecutionOrder": ort.ExecutionOrder}
        print(json.dumps({k: sorted(n for n in dir(o) if not n.startswith("_")) for k, o in objs.items()}))
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import json
    theirs = json.loads(out.stdout.strip().splitlines()[-1])
    from mlrt.lowlevel._compat import _submodules
    s = ml.InferenceSession(_model((1,)))
    ours = {"module": ml, "state": _submodules(ml)["onnxruntime.capi._pybind_state"], "InferenceSession": s,
            "SessionOptions": ml.SessionOptions(), "RunOptions": ml.RunOptions(),
            "OrtValue": ml.OrtValue.ortvalue_from_numpy(np.ones(1, np.float32)), "IOBinding": s.io_binding(),
            "NodeArg": s.get_inputs()[0], "ModelMetadata": s.get_modelmeta(), "OrtDevice": ml.OrtDevice,
            "OrtMemoryInfo": ml.OrtMemoryInfo, "SparseTensor": ml.SparseTensor,
            "GraphOptimizationLevel": ml.GraphOptimizationLevel, "ExecutionMode": ml.ExecutionMode,
            "ExecutionOrder": ml.ExecutionOrder}
    for key, names in theirs.items():
        missing = set(names) - _pub(ours[key]) - {"capi"}  # (set by install_as_onnxruntime(), if a test ran it)
        assert missing == MISSING_ALLOWED.get(key, set()), key
