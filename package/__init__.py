"""mlrt: a layered ONNX inference SDK.

    mlrt.highlevel     Windows ML-style model API (LearningModel, sessions, bindings)
    mlrt.media         video frames, images, tensorization
    mlrt.lowlevel      onnxruntime-compatible tensor API (InferenceSession, ...)
    mlrt.native        the runtime core: graph pipeline, C kernels, providers
    mlrt.distribution  finding and loading a bundled or system-installed runtime
"""

from ._errors import (DeviceError, InvalidArgument, InvalidModel, MlrtError, NoSuchFile, NotImplemented,
                      ResourceExhausted, RuntimeLoadError)
from ._version import __version__

__all__ = ["__version__", "MlrtError", "InvalidModel", "NoSuchFile", "InvalidArgument", "NotImplemented",
           "RuntimeLoadError", "DeviceError", "ResourceExhausted"]
