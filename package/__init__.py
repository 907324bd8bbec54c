"""mlrt: a layered ONNX inference SDK.

    mlrt.highlevel     Windows ML-style model API (LearningModel, sessions, bindings)
    mlrt.media         video frames, images, tensorization
    mlrt.lowlevel      onnxruntime-compatible tensor API (InferenceSession, ...)
    mlrt.native        the runtime core: graph pipeline, C kernels, providers
    mlrt.distribution  finding and loading a bundled or system-installed runtime
"""

from ._errors import (DeviceError, InvalidArgument, InvalidModel, MlrtError, NotAvailable, NoSuchFeature, NoSuchFile,
                      NotImplemented, ResourceExhausted, RuntimeLoadError)
from ._lazy import lazy as _lazy

__all__ = ["__version__", "MlrtError", "InvalidModel", "NoSuchFile", "InvalidArgument", "NoSuchFeature",
           "NotAvailable", "NotImplemented", "RuntimeLoadError", "DeviceError", "ResourceExhausted"]


# __version__ is read from the installed metadata when first asked for: importlib.metadata
# alone costs a fifth of importing mlrt.lowlevel
__getattr__, __dir__ = _lazy(__name__, globals(), {"__version__": "._version"})
