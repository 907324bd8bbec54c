"""Public names are exactly what __all__ says, and every name in __all__ exists."""

import mlrt
import mlrt.backend
import mlrt.distribution
import mlrt.highlevel
import mlrt.lowlevel
import mlrt.media
import mlrt.native

PINNED = {
    mlrt: {"__version__", "MlrtError", "InvalidModel", "NoSuchFile", "InvalidArgument", "NoSuchFeature",
           "NotAvailable", "NotImplemented", "RuntimeLoadError", "DeviceError", "ResourceExhausted"},
    mlrt.lowlevel: {"__version__", "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
                    "ExecutionMode", "ExecutionOrder", "NodeArg", "OrtValue", "IOBinding", "ModelMetadata", "CustomOp",
                    "get_available_providers", "get_device",
                    "get_version_string", "get_all_providers", "get_build_info", "set_default_logger_severity",
                    "set_default_logger_verbosity", "set_seed", "disable_telemetry_events", "enable_telemetry_events",
                    "has_collective_ops", "install_as_onnxruntime", "MlrtError", "InvalidModel", "NoSuchFile",
                    "InvalidArgument", "NotImplemented", "RuntimeLoadError", "DeviceError", "ResourceExhausted",
                    "OrtDevice", "OrtDeviceVendorId", "OrtMemoryInfo", "OrtMemType", "OrtAllocatorType",
                    "OrtMemoryInfoDeviceType", "OrtDeviceMemoryType", "OrtHardwareDeviceType",
                    "OrtExecutionProviderDevicePolicy", "OrtEpDevice", "OrtHardwareDevice", "OrtEpAssignedNode",
                    "OrtEpAssignedSubgraph", "OrtArenaCfg", "OrtSparseFormat", "SparseTensor", "SessionIOBinding",
                    "create_and_register_allocator", "create_and_register_allocator_v2", "get_ep_devices", "version",
                    "package_name", "cuda_version", "preload_dlls", "print_debug_info", "set_global_thread_pool_sizes",
                    "register_execution_provider_library", "unregister_execution_provider_library",
                    "set_default_logger_callback", "copy_tensors", "LoraAdapter", "AdapterFormat",
                    "ModelCompiler", "OrtCompileApiFlags", "OrtExternalInitializerInfo", "OrtEpContextData",
                    "OrtEpContextDataBuffer", "OrtSyncStream", "ModelPackage", "ModelPackageOptions",
                    "ModelPackageContext", "ModelPackageComponentContext", "ModelPackageWriteMode"},
    mlrt.highlevel: {"LearningModel", "LearningModelDevice", "LearningModelDeviceKind", "LearningModelSession",
                     "LearningModelSessionOptions", "LearningModelBinding", "LearningModelEvaluationResult",
                     "LearningModelFeatureKind", "TensorFeatureDescriptor", "ImageFeatureDescriptor",
                     "MapFeatureDescriptor", "SequenceFeatureDescriptor", "TensorKind", "ImageFeatureValue", "Tensor",
                     "TensorFloat", "TensorFloat16Bit", "TensorDouble", "TensorInt8Bit", "TensorUInt8Bit",
                     "TensorInt16Bit", "TensorUInt16Bit", "TensorInt32Bit", "TensorUInt32Bit", "TensorInt64Bit",
                     "TensorUInt64Bit", "TensorBoolean", "TensorString", "VideoFrame", "VideoSource",
                     "BitmapPixelFormat", "BitmapAlphaMode", "BitmapBounds", "LearningModelPixelRange",
                     "DeviceWarning"},
    mlrt.media: {"BitmapAlphaMode", "BitmapBounds", "BitmapPixelFormat", "LearningModelPixelRange", "VideoFrame",
                 "VideoSource", "ImageTarget", "centred_crop", "detensorize", "tensorize"},
    mlrt.backend: {"MlrtBackend", "MlrtBackendRep", "prepare", "run_model", "run", "run_node", "supports_device",
                   "is_compatible", "is_opset_supported"},
    mlrt.distribution: {"LIBRARY_NAME", "MANIFEST_NAME", "Runtime", "bundle", "check_folder", "current_runtime",
                        "install", "installed", "load", "read_manifest", "select_runtime", "system_prefix",
                        "system_root", "uninstall"},
    # what the layers above use of the native library (mlrt.native._lib), loaded when first asked for
    mlrt.native: {"MAX_RANK", "ThreadPool", "enum_value", "ffi", "fill_tensor", "find_kernel", "kernel_table", "lib",
                  "np_type", "onnx_type", "pack_params", "raise_status", "runtime"},
}


def test_all_is_pinned():
    for module, names in PINNED.items():
        assert set(module.__all__) == names, module.__name__
        for name in names:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_error_tree_documented():
    doc = mlrt._errors.__doc__
    for name in PINNED[mlrt] - {"__version__"}:
        assert name in doc


def test_cli_reports_runtime(capsys):
    from mlrt.__main__ import main
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "runtime: bundled" in out and "C kernels:" in out and "providers: CPUExecutionProvider" in out
    try:
        from mlrt.native.opencl import _device
    except ImportError:  # (no OpenCL provider installed: none is reported)
        assert "OpenCL" not in out
        return
    try:
        device = _device.default_device()
    except mlrt.DeviceError:
        assert "OpenCL provider: unavailable" in out
        return
    devices = out.split("OpenCL devices (in the order tried; MLRT_OPENCL_DEVICE overrides):\n")[1].split("OpenCL provider:")[0]
    assert f"{device.name} (" in devices and ": in use" in devices  # each device with its verdict
    assert all(line.rsplit(": ", 1)[-1] in ("in use", "passed") or ": failed: " in line or "marked broken" in line
               for line in devices.strip().splitlines())
