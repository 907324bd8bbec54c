"""mlrt.lowlevel: the onnxruntime-compatible tensor API.

Apps written against onnxruntime's Python API run unchanged with
``sys.modules["onnxruntime"] = mlrt.lowlevel``.
"""

from .._errors import (DeviceError, InvalidArgument, InvalidModel, MlrtError, NotImplemented,
                       ResourceExhausted, RuntimeLoadError)
from .._version import __version__
from ._options import ExecutionMode, GraphOptimizationLevel, RunOptions, SessionOptions
from ._ortvalue import IOBinding, OrtValue
from ._session import InferenceSession, ModelMetadata, NodeArg, get_available_providers


def get_device() -> str:
    """The default device kind of this build ("CPU")."""
    return "CPU"


def get_version_string() -> str:
    return __version__


__all__ = ["__version__", "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
           "ExecutionMode", "NodeArg", "OrtValue", "IOBinding", "ModelMetadata", "get_available_providers", "get_device",
           "get_version_string", "MlrtError", "InvalidModel", "InvalidArgument", "NotImplemented",
           "RuntimeLoadError", "DeviceError", "ResourceExhausted"]
