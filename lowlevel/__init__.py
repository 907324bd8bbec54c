"""mlrt.lowlevel: the onnxruntime-compatible tensor API.

Apps written against onnxruntime's Python API run unchanged once
``mlrt.lowlevel.install_as_onnxruntime()`` has made importing onnxruntime give this
module (with onnxruntime's capi submodules and exception names: see _compat.py; its module-level
functions: _module_level.py).
"""

from .._errors import (DeviceError, InvalidArgument, InvalidModel, MlrtError, NoSuchFile, NotImplemented,
                       ResourceExhausted, RuntimeLoadError)
from .._lazy import lazy as _lazy
from ._options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions
from ._ortvalue import IOBinding, OrtValue
from ._sparse import OrtSparseFormat, SparseTensor


def get_device() -> str:
    """The default device kind of this build ("CPU")."""
    return "CPU"


def get_version_string() -> str:
    """onnxruntime's API level and mlrt's version, as __version__: "1.32.0+mlrt.0.1.0"."""
    from ._module_level import api_version
    return api_version()


# Imported when first asked for: the session's pipeline (graph loading, checker, optimizer,
# partitioner) and the native library's glue, with onnx behind them, by the first
# InferenceSession; the rest of onnxruntime's module (its module-level functions, device and
# allocator classes) by their first use.  So importing this module costs no more than
# importing onnxruntime.
__getattr__, __dir__ = _lazy(__name__, globals(), {
    **dict.fromkeys(("InferenceSession", "ModelMetadata", "NodeArg", "get_available_providers"), "._session"),
    "install_as_onnxruntime": "._compat",
    **dict.fromkeys(("SessionIOBinding", "copy_tensors", "cuda_version", "disable_telemetry_events",
                     "enable_telemetry_events", "get_all_providers", "get_build_info", "has_collective_ops",
                     "package_name", "preload_dlls", "print_debug_info", "register_execution_provider_library",
                     "set_default_logger_callback", "set_default_logger_severity", "set_default_logger_verbosity",
                     "set_global_thread_pool_sizes", "set_seed", "unregister_execution_provider_library", "version"),
                    "._module_level"),
    **dict.fromkeys(("check_and_normalize_provider_args", "get_ort_device_type", "get_vendor_id_for_device_type"),
                    "._providers"),
    **dict.fromkeys(("OrtAllocatorType", "OrtArenaCfg", "OrtDevice", "OrtDeviceMemoryType", "OrtDeviceVendorId",
                     "OrtEpAssignedNode", "OrtEpAssignedSubgraph", "OrtEpDevice", "OrtExecutionProviderDevicePolicy",
                     "OrtHardwareDevice", "OrtHardwareDeviceType", "OrtMemoryInfo", "OrtMemoryInfoDeviceType",
                     "OrtMemType", "create_and_register_allocator", "create_and_register_allocator_v2",
                     "get_ep_devices"), "._device"),
    **dict.fromkeys(("AdapterFormat", "LoraAdapter"), "._lora"),
    **dict.fromkeys(("ModelCompiler", "OrtCompileApiFlags", "OrtExternalInitializerInfo", "OrtEpContextData",
                     "OrtEpContextDataBuffer", "OrtSyncStream", "ModelPackage", "ModelPackageOptions",
                     "ModelPackageContext", "ModelPackageComponentContext", "ModelPackageWriteMode"), "._compile"),
    "CustomOp": "._custom_ops", "__version__": "._module_level"})

__all__ = ["__version__", "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
           "ExecutionMode", "ExecutionOrder", "NodeArg", "OrtValue", "IOBinding", "ModelMetadata", "CustomOp",
           "get_available_providers", "get_device",
           "get_version_string", "get_all_providers", "get_build_info", "set_default_logger_severity",
           "set_default_logger_verbosity", "set_seed", "disable_telemetry_events", "enable_telemetry_events",
           "has_collective_ops", "install_as_onnxruntime", "MlrtError", "InvalidModel", "NoSuchFile",
           "InvalidArgument", "NotImplemented", "RuntimeLoadError", "DeviceError", "ResourceExhausted",
           # devices, memory, sparse tensors and the rest of onnxruntime's module (_device.py, _sparse.py, _module_level.py)
           "OrtDevice", "OrtDeviceVendorId", "OrtMemoryInfo", "OrtMemType", "OrtAllocatorType", "OrtMemoryInfoDeviceType",
           "OrtDeviceMemoryType", "OrtHardwareDeviceType", "OrtExecutionProviderDevicePolicy", "OrtEpDevice",
           "OrtHardwareDevice", "OrtEpAssignedNode", "OrtEpAssignedSubgraph", "OrtArenaCfg", "OrtSparseFormat",
           "SparseTensor", "SessionIOBinding", "create_and_register_allocator", "create_and_register_allocator_v2",
           "get_ep_devices", "version", "package_name", "cuda_version", "preload_dlls", "print_debug_info",
           "set_global_thread_pool_sizes", "register_execution_provider_library",
           "unregister_execution_provider_library", "set_default_logger_callback", "copy_tensors",
           # LoRA adapters (_lora.py)
           "LoraAdapter", "AdapterFormat",
           # compiling, EPContext and model packages (_compile.py)
           "ModelCompiler", "OrtCompileApiFlags", "OrtExternalInitializerInfo", "OrtEpContextData",
           "OrtEpContextDataBuffer", "OrtSyncStream", "ModelPackage", "ModelPackageOptions", "ModelPackageContext",
           "ModelPackageComponentContext", "ModelPackageWriteMode"]
