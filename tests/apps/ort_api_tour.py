"""App 6: onnxruntime's Python API the way its documentation walks through it, every
example that needs no CUDA or other vendor library: load and run, OrtValue, IOBinding
(host arrays, raw pointers, OrtValues), run_with_ort_values, the ONNX backend module,
the common errors, metadata, profiling, saving the optimized model with its weights in
an external file, ModelCompiler, the providers argument, feeds given as lists, session
and run config entries, sparse tensors and the package facts.

Usage: ort_api_tour.py FOLDER OUT.npz (FOLDER: where the models are written, in a folder of
the runtime's own: the two runtimes run the tour at the same time, and one must not read a
model file the other is writing, or the other's optimized model)."""

import json
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import onnxruntime as ort
from onnxruntime.capi.onnxruntime_inference_collection import check_and_normalize_provider_args
from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument

folder, out = os.path.join(sys.argv[1], ort.__name__), sys.argv[2]
os.makedirs(folder, exist_ok=True)
saved = {}


def model_file(name, nodes, inputs, outputs, initializers=(), opset=17):
    m = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, list(initializers)),
                          opset_imports=[helper.make_opsetid("", opset)], producer_name="tour", model_version=3)
    m.ir_version = 8
    helper.set_model_props(m, {"author": "tour", "license": "none"})
    path = os.path.join(folder, f"{name}.onnx")
    onnx.save(m, path)
    return path


x = np.random.default_rng(7).random((3, 4, 5), dtype=np.float32)
sigmoid = model_file("sigmoid", [helper.make_node("Sigmoid", ["X"], ["Y"])],
                     [helper.make_tensor_value_info("X", T.FLOAT, [3, 4, 5])],
                     [helper.make_tensor_value_info("Y", T.FLOAT, [3, 4, 5])])
w = np.random.default_rng(8).standard_normal((5, 600)).astype(np.float32)  # 12 KB: large enough to go outside
dense = model_file("dense", [helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Relu", ["H"], ["Y"])],
                   [helper.make_tensor_value_info("X", T.FLOAT, ["batch", 5])],
                   [helper.make_tensor_value_info("Y", T.FLOAT, ["batch", 600])],
                   [numpy_helper.from_array(w, "W")])

# -- load and run ---------------------------------------------------------------------------------
session = ort.InferenceSession(sigmoid, providers=ort.get_available_providers())
inputs, outputs = session.get_inputs(), session.get_outputs()
print("inputs", [(i.name, i.type, i.shape) for i in inputs], "outputs", [(o.name, o.type, o.shape) for o in outputs])
saved["run"] = session.run([outputs[0].name], {inputs[0].name: x})[0]

# -- OrtValue -------------------------------------------------------------------------------------
value = ort.OrtValue.ortvalue_from_numpy(x)
print("ortvalue", value.device_name(), value.shape(), value.data_type(), value.is_tensor(),
      np.array_equal(value.numpy(), x))
saved["run_ortvalue"] = session.run(["Y"], {"X": value})[0]

# -- IOBinding ------------------------------------------------------------------------------------
binding = session.io_binding()
binding.bind_cpu_input("X", x)
binding.bind_output("Y")
session.run_with_iobinding(binding)
saved["iobinding_cpu"] = binding.copy_outputs_to_cpu()[0]

y_value = ort.OrtValue.ortvalue_from_shape_and_type([3, 4, 5], np.float32, "cpu", 0)
binding = session.io_binding()
binding.bind_input(name="X", device_type=value.device_name(), device_id=0, element_type=np.float32,
                   shape=value.shape(), buffer_ptr=value.data_ptr())
binding.bind_output(name="Y", device_type=y_value.device_name(), device_id=0, element_type=np.float32,
                    shape=y_value.shape(), buffer_ptr=y_value.data_ptr())
session.run_with_iobinding(binding)
saved["iobinding_pointers"] = y_value.numpy().copy()

binding = session.io_binding()
binding.bind_ortvalue_input("X", value)
binding.bind_ortvalue_output("Y", y_value)
session.run_with_iobinding(binding)
saved["iobinding_ortvalues"] = y_value.numpy().copy()
saved["run_with_ort_values"] = session.run_with_ort_values(["Y"], {"X": value})[0].numpy()

# -- the ONNX backend -----------------------------------------------------------------------------
import onnxruntime.backend as backend  # noqa: E402

saved["backend_prepare"] = backend.prepare(sigmoid, "CPU").run(x)[0]
saved["backend_run"] = backend.run(onnx.load(sigmoid), x)[0]
print("backend", backend.supports_device("CPU"), backend.is_compatible(onnx.load(sigmoid)))

# -- common errors --------------------------------------------------------------------------------
try:
    session.run(None, {"X": x.astype(np.float64)})
except InvalidArgument as exc:
    print("wrong type:", "Unexpected input data type" in str(exc))
try:
    session.run(None, {"X": x[:, :2]})
except InvalidArgument as exc:
    print("wrong shape:", "Got invalid dimensions for input: X" in str(exc))
try:
    session.run(None, {"X": x[None]})
except InvalidArgument as exc:
    print("wrong rank:", "Invalid rank for input: X Got: 4 Expected: 3" in str(exc))
try:
    session.run(None, {"x": x})
except ValueError as exc:
    print("misspelt input:", "Required inputs (['X']) are missing from input feed (['x'])." in str(exc))
try:
    session.run(["y"], {"X": x})
except InvalidArgument as exc:
    print("misspelt output:", "Invalid output name:y" in str(exc))

# -- metadata -------------------------------------------------------------------------------------
meta = session.get_modelmeta()
print("meta", meta.producer_name, meta.graph_name, meta.version, sorted(meta.custom_metadata_map.items()))

# -- profiling ------------------------------------------------------------------------------------
options = ort.SessionOptions()
options.enable_profiling = True
options.profile_file_prefix = os.path.join(folder, "tour")
profiled = ort.InferenceSession(sigmoid, options, providers=["CPUExecutionProvider"])
profiled.run(None, {"X": x})
trace = profiled.end_profiling()
with open(trace) as f:
    events = json.load(f)
print("profile", type(events).__name__, bool(events), os.path.basename(trace).startswith("tour"))

# -- the optimized model, its weights in a file of their own --------------------------------------
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
options.optimized_model_filepath = os.path.join(folder, "dense.opt.onnx")
options.add_session_config_entry("session.optimized_model_external_initializers_file_name", "dense.opt.bin")
options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
ort.InferenceSession(dense, options, providers=["CPUExecutionProvider"])
print("optimized model files", sorted(n for n in os.listdir(folder) if n.startswith("dense.opt")))
feeds = {"X": np.random.default_rng(9).random((2, 5), dtype=np.float32)}
saved["optimized"] = ort.InferenceSession(options.optimized_model_filepath,
                                          providers=["CPUExecutionProvider"]).run(None, feeds)[0]
print("config entry", options.get_session_config_entry("session.optimized_model_external_initializers_file_name"))
try:
    options.get_session_config_entry("session.never_set")
except RuntimeError as exc:
    print("entry never set:", "does not have configuration with key: session.never_set" in str(exc))

# -- ModelCompiler ----------------------------------------------------------------------------------
compiler = ort.ModelCompiler(ort.SessionOptions(), dense, external_initializers_file_path="dense.ctx.bin",
                             external_initializers_size_threshold=1024)
compiler.compile_to_file(os.path.join(folder, "dense.ctx.onnx"))
print("compiled files", sorted(n for n in os.listdir(folder) if n.startswith("dense.ctx")))
saved["compiled"] = ort.InferenceSession(os.path.join(folder, "dense.ctx.onnx"),
                                         providers=["CPUExecutionProvider"]).run(None, feeds)[0]
saved["compiled_bytes"] = ort.InferenceSession(ort.ModelCompiler(ort.SessionOptions(), dense).compile_to_bytes(),
                                               providers=["CPUExecutionProvider"]).run(None, feeds)[0]
try:
    ort.ModelCompiler(ort.SessionOptions(), dense,
                      flags=ort.OrtCompileApiFlags.ERROR_IF_OUTPUT_FILE_EXISTS).compile_to_file(dense)
except Fail as exc:
    print("output exists:", "exists already" in str(exc))
try:
    ort.ModelCompiler(ort.SessionOptions(), dense, flags=ort.OrtCompileApiFlags.ERROR_IF_NO_NODES_COMPILED) \
        .compile_to_file(os.path.join(folder, "none.onnx"))
except Fail as exc:
    print("nothing compiled:", "Unable to compile any nodes" in str(exc))

# -- providers, feeds as lists --------------------------------------------------------------------
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    names, provider_options = check_and_normalize_provider_args(
        ["CPUExecutionProvider", ("NoSuchExecutionProvider", {"n": 1})], None, ["CPUExecutionProvider"])
print("providers", names, provider_options, [str(w.message)[:60] for w in caught])
listed = ort.InferenceSession(dense, providers=[("CPUExecutionProvider", {})])
print("providers of a session", listed.get_providers())
saved["list_feed"] = listed.run(None, {"X": [[1, 2, 3, 4, 5]]})[0]
run_options = ort.RunOptions()
run_options.add_run_config_entry("tour.key", "1")
print("run entry", run_options.get_run_config_entry("tour.key"))
saved["with_run_options"] = listed.run(None, feeds, run_options)[0]

# -- sparse tensors -------------------------------------------------------------------------------
sparse = ort.SparseTensor.sparse_coo_from_numpy([3, 4], np.array([1.5, -2], np.float32), np.array([1, 10]),
                                                ort.OrtDevice.make("cpu", 0))
print("sparse", sparse.format(), list(sparse.dense_shape()), sparse.data_type(), sparse.device_name(),
      sparse.values().tolist(), sparse.as_coo_view().indices().tolist())
held = ort.OrtValue.ort_value_from_sparse_tensor(sparse)
print("sparse value", held.is_tensor(), held.is_sparse_tensor(), held.has_value(), held.data_type())
try:
    sparse.as_csrc_view()
except RuntimeError as exc:
    print("not csr:", "does not contain CSR(C) format" in str(exc))

# -- the package --------------------------------------------------------------------------------
from onnxruntime.capi import build_and_package_info  # noqa: E402


def api_level(version):
    return tuple(int(p) for p in version.split("+")[0].split(".")[:2])


print("device", ort.get_device(), "api", api_level(ort.__version__) >= (1, 32),
      api_level(build_and_package_info.__version__) == api_level(ort.__version__))
np.savez(out, **saved)
