"""mlrt.lowlevel as the `onnxruntime` module: its exception classes and the submodules
apps import names from (onnxruntime's module-level functions are _module_level.py).  An app calls
`mlrt.lowlevel.install_as_onnxruntime()` first; its own imports of onnxruntime then
give this module (the example is in docs/lowlevel.md).

`install_as_onnxruntime()` puts mlrt.lowlevel in sys.modules as "onnxruntime", with
`onnxruntime.capi`, `onnxruntime.capi.onnxruntime_pybind11_state` (the exception
classes below and every public name of mlrt.lowlevel) and
`onnxruntime.capi._pybind_state` (the same module object), and
`onnxruntime.capi.onnxruntime_inference_collection` (the classes apps import from it:
InferenceSession, SessionOptions, RunOptions, OrtValue, IOBinding, NodeArg, OrtDevice,
OrtDeviceVendorId, SparseTensor, copy_tensors, AdapterFormat).  The state module also has the names
onnxruntime keeps only there (OrtValueVector, the sparse views, ArenaExtendStrategy).

onnxruntime's exception classes are other names for mlrt's own (mlrt raises only the
classes of mlrt._errors), so an `except` written for onnxruntime catches what mlrt
raises:

    onnxruntime         mlrt
    Fail                MlrtError        (the base: catches everything mlrt raises)
    RuntimeException    MlrtError
    EngineError         MlrtError
    ModelLoaded         MlrtError
    InvalidArgument     InvalidArgument  (also a ValueError)
    NotImplemented      NotImplemented   (also a NotImplementedError)
    InvalidGraph        InvalidModel
    InvalidProtobuf     InvalidModel
    NoModel             InvalidModel
    NoSuchFile          NoSuchFile       (an InvalidModel and a FileNotFoundError)
    EPFail              DeviceError
    DeviceReset         DeviceError
    NotFound, ModelLoadCanceled, ModelRequiresCompilation
                        MlrtError        (statuses mlrt never gives)

onnxruntime's classes are unrelated to one another; mlrt's form a tree, and several
names share a class.  So the first matching `except` wins where onnxruntime would
have picked another: `except InvalidProtobuf` placed before `except NoSuchFile` also
catches a missing file, and `except ModelLoaded` (or RuntimeException, EngineError)
catches every mlrt error, as `except Fail` does.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types

from .._errors import DeviceError, InvalidArgument, InvalidModel, MlrtError, NoSuchFile, NotImplemented

# onnxruntime's exception names -> the mlrt classes they stand for (see the table above)
ORT_EXCEPTIONS = {
    "Fail": MlrtError, "RuntimeException": MlrtError, "EngineError": MlrtError, "ModelLoaded": MlrtError,
    "InvalidArgument": InvalidArgument, "NotImplemented": NotImplemented,
    "InvalidGraph": InvalidModel, "InvalidProtobuf": InvalidModel, "NoModel": InvalidModel,
    "NoSuchFile": NoSuchFile, "EPFail": DeviceError, "DeviceReset": DeviceError,
    "NotFound": MlrtError, "ModelLoadCanceled": MlrtError, "ModelRequiresCompilation": MlrtError,
}

# the names apps use in onnxruntime.capi.onnxruntime_inference_collection
INFERENCE_COLLECTION = ("InferenceSession", "SessionOptions", "RunOptions", "OrtValue", "IOBinding", "NodeArg",
                        "OrtDevice", "OrtDeviceVendorId", "SparseTensor", "copy_tensors", "AdapterFormat", "ModelCompiler",
                        "check_and_normalize_provider_args", "get_ort_device_type", "get_vendor_id_for_device_type")


def _state_only() -> dict:
    """Names onnxruntime's _pybind_state has that its top-level module does not."""
    from ._device import ArenaExtendStrategy
    from ._module_level import OrtValueVector
    from ._sparse import SparseBlockSparseView, SparseCooView, SparseCsrView
    return {"OrtValueVector": OrtValueVector, "SparseCooView": SparseCooView, "SparseCsrView": SparseCsrView,
            "SparseBlockSparseView": SparseBlockSparseView, "ArenaExtendStrategy": ArenaExtendStrategy,
            "kNextPowerOfTwo": ArenaExtendStrategy.kNextPowerOfTwo,
            "kSameAsRequested": ArenaExtendStrategy.kSameAsRequested}


def _module(name: str, package: bool, names: dict, lazy=None) -> types.ModuleType:
    """A module named `name` holding `names`; `lazy(name)` gives the others, when asked for."""
    module = types.ModuleType(name, f"mlrt.lowlevel as {name}")
    if lazy is not None:
        def __getattr__(attr):  # noqa: N807 - PEP 562
            try:
                return lazy(attr)
            except (AttributeError, KeyError):
                raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None
        names = {**names, "__getattr__": __getattr__}
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=package)
    module.__package__ = name if package else name.rpartition(".")[0]
    if package:
        module.__path__ = []  # a package with nothing else to import from it
    vars(module).update(names)
    module.__all__ = sorted(n for n in names if not n.startswith("_"))
    return module


_installed: dict[str, types.ModuleType] = {}  # "onnxruntime..." -> its module, made once


def _submodules(lowlevel: types.ModuleType) -> dict[str, types.ModuleType]:
    if not _installed:
        state = _module("onnxruntime.capi.onnxruntime_pybind11_state", False,
                        {**{n: getattr(lowlevel, n) for n in lowlevel.__all__}, **_state_only(), **ORT_EXCEPTIONS})
        collection = _module("onnxruntime.capi.onnxruntime_inference_collection", False,
                             {**{n: getattr(lowlevel, n) for n in INFERENCE_COLLECTION},
                              "Session": lowlevel.InferenceSession})  # (onnxruntime's base of InferenceSession)
        package_info = _module("onnxruntime.capi.build_and_package_info", False,
                               {"package_name": "mlrt", "cuda_version": ""}, lambda n: _version_of(lowlevel, n))
        capi = _module("onnxruntime.capi", True, {"onnxruntime_pybind11_state": state, "_pybind_state": state,
                                                  "onnxruntime_inference_collection": collection,
                                                  "build_and_package_info": package_info})
        # onnxruntime.backend: the ONNX backend protocol (mlrt.backend, which imports onnx: when first used)
        backend = _module("onnxruntime.backend", True, {}, lambda n: getattr(_backend(), _BACKEND_NAMES[n]))
        backend.__all__ = sorted(_BACKEND_NAMES)
        _installed.update({"onnxruntime": lowlevel, "onnxruntime.capi": capi, "onnxruntime.backend": backend,
                           "onnxruntime.capi.build_and_package_info": package_info,
                           "onnxruntime.capi.onnxruntime_pybind11_state": state,
                           "onnxruntime.capi._pybind_state": state,
                           "onnxruntime.capi.onnxruntime_inference_collection": collection})
    return _installed


def install_as_onnxruntime(*, force: bool = False) -> types.ModuleType:
    """Make importing onnxruntime (and its capi submodules) give mlrt.lowlevel; returns
    mlrt.lowlevel.  Calling it again changes nothing.

    Call it before anything imports onnxruntime: if the real onnxruntime is imported
    already, InvalidArgument, since an app would hold both.  With force=True it is
    replaced in sys.modules, its submodules dropped from there (modules that imported
    it keep the real one)."""
    lowlevel = sys.modules[__package__]
    ours = _submodules(lowlevel)
    current = sys.modules.get("onnxruntime")
    if current is not None and current is not lowlevel:
        if not force:
            where = getattr(current, "__file__", None) or current.__name__
            raise InvalidArgument(f"onnxruntime ({where}) is already imported; call "
                                  "mlrt.lowlevel.install_as_onnxruntime() before anything imports onnxruntime, "
                                  "or pass force=True to replace it in sys.modules")
        for name in [n for n in sys.modules if n.startswith("onnxruntime.") and sys.modules[n] is not ours.get(n)]:
            del sys.modules[name]
    sys.modules.update(ours)
    lowlevel.capi, lowlevel.backend = ours["onnxruntime.capi"], ours["onnxruntime.backend"]
    return lowlevel


# onnxruntime.backend's names -> mlrt.backend's
_BACKEND_NAMES = {"prepare": "prepare", "run": "run_model", "run_model": "run_model", "is_compatible": "is_compatible",
                  "supports_device": "supports_device", "is_opset_supported": "is_opset_supported"}


def _backend() -> types.ModuleType:
    import importlib
    return importlib.import_module("..backend", __package__)


def _version_of(lowlevel: types.ModuleType, name: str) -> str:
    if name != "__version__":
        raise AttributeError(name)
    return lowlevel.__version__


__all__ = ["ORT_EXCEPTIONS", "install_as_onnxruntime"]
