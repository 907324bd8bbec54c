"""mlrt.highlevel: the Windows ML model API, in Python (shared/HIGHLEVEL.md).

    model = LearningModel.load("model.onnx")
    session = LearningModelSession(model, LearningModelDevice(LearningModelDeviceKind.GPU))
    binding = LearningModelBinding(session)
    binding.bind("data", VideoFrame.from_file("cat.jpg"))
    result = session.evaluate(binding)
    scores = result.outputs["prob"]

Frames bound to image inputs are cropped, resized, converted and normalized by the
model's image metadata and the bind properties, in one pass in C (CPU devices) or
OpenCL (GPU devices, straight into the device tensor the model reads).  Below this
tier, mlrt.lowlevel is the onnxruntime-compatible tensor API.
"""

from ..media import (BitmapAlphaMode, BitmapBounds, BitmapPixelFormat, LearningModelPixelRange, VideoFrame,
                     VideoSource)
from ._binding import LearningModelBinding
from ._device import DeviceWarning, LearningModelDevice, LearningModelDeviceKind
from ._model import (ImageFeatureDescriptor, LearningModel, LearningModelFeatureKind, MapFeatureDescriptor,
                     SequenceFeatureDescriptor, TensorFeatureDescriptor, TensorKind)
from ._session import LearningModelEvaluationResult, LearningModelSession, LearningModelSessionOptions
from ._values import (ImageFeatureValue, Tensor, TensorBoolean, TensorDouble, TensorFloat, TensorFloat16Bit,
                      TensorInt8Bit, TensorInt16Bit, TensorInt32Bit, TensorInt64Bit, TensorString, TensorUInt8Bit,
                      TensorUInt16Bit, TensorUInt32Bit, TensorUInt64Bit)

__all__ = ["LearningModel", "LearningModelDevice", "LearningModelDeviceKind", "LearningModelSession",
           "LearningModelSessionOptions", "LearningModelBinding", "LearningModelEvaluationResult",
           "LearningModelFeatureKind", "TensorFeatureDescriptor", "ImageFeatureDescriptor", "MapFeatureDescriptor",
           "SequenceFeatureDescriptor", "TensorKind", "ImageFeatureValue", "Tensor", "TensorFloat", "TensorFloat16Bit",
           "TensorDouble", "TensorInt8Bit", "TensorUInt8Bit", "TensorInt16Bit", "TensorUInt16Bit", "TensorInt32Bit",
           "TensorUInt32Bit", "TensorInt64Bit", "TensorUInt64Bit", "TensorBoolean", "TensorString", "VideoFrame",
           "VideoSource", "BitmapPixelFormat", "BitmapAlphaMode", "BitmapBounds", "LearningModelPixelRange",
           "DeviceWarning"]
