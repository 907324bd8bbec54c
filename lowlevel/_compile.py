"""onnxruntime's model compiling and packaging names: ModelCompiler, OrtCompileApiFlags,
OrtExternalInitializerInfo, the EPContext data classes, OrtSyncStream and the model
package classes.

onnxruntime compiles a model for execution providers that precompile subgraphs into
EPContext nodes (QNN, OpenVINO, TensorRT ...); for providers that do not, its compiler
writes the model as the chosen optimization level leaves it.  mlrt's providers compile
nothing ahead into a model (the OpenCL provider caches its programs on disk instead:
docs/opencl.md), so ModelCompiler here always does the second: it writes the model
optimized at `graph_optimization_level` (by default not at all), with large initializers
in an external file when asked, loadable by mlrt and by onnxruntime.  The flag
ERROR_IF_NO_NODES_COMPILED therefore always fails, with onnxruntime's sentence.

The model package classes (onnxruntime's per-provider variants of a model in one folder)
and OrtSyncStream (a provider's device stream) are refused with NotImplemented saying why.
"""

from __future__ import annotations

import enum
import os
import tempfile

from .._errors import InvalidArgument, MlrtError, NotImplemented
from ._enum import OrtEnum
from ._options import GraphOptimizationLevel, SessionOptions


class OrtCompileApiFlags(enum.IntFlag):
    __str__ = enum.Enum.__str__  # (as onnxruntime's print: "OrtCompileApiFlags.NONE")
    NONE = 0
    ERROR_IF_NO_NODES_COMPILED = 1
    ERROR_IF_OUTPUT_FILE_EXISTS = 2


class OrtExternalInitializerInfo:
    """Where an initializer's bytes are: a file, an offset in it and a length."""

    def __init__(self, filepath: str, file_offset: int, byte_size: int):
        self._where = (os.fspath(filepath), int(file_offset), int(byte_size))

    filepath = property(lambda self: self._where[0])
    file_offset = property(lambda self: self._where[1])
    byte_size = property(lambda self: self._where[2])


class ModelCompiler:
    """Compile a model (a path or bytes) with a session's options: see the module's
    docstring for what compiling is in mlrt.  `external_initializers_file_path` and
    `external_initializers_size_threshold` put initializers of at least that many bytes
    in that file (relative to the output model's folder)."""

    def __init__(self, sess_options: SessionOptions, input_model_path_or_bytes, embed_compiled_data_into_model=False,
                 external_initializers_file_path=None, external_initializers_size_threshold: int = 1024,
                 flags: int = OrtCompileApiFlags.NONE,
                 graph_optimization_level=GraphOptimizationLevel.ORT_DISABLE_ALL,
                 get_initializer_location_func=None):
        if not isinstance(sess_options, SessionOptions):
            raise InvalidArgument(f"ModelCompiler: sess_options must be a SessionOptions, got "
                                  f"{type(sess_options).__name__}")
        model = input_model_path_or_bytes
        if isinstance(model, (str, os.PathLike)):
            model = os.fspath(model)
            if not model:
                raise InvalidArgument("ModelCompiler: the input model path is empty. Input model path is empty")
        elif isinstance(model, (bytes, bytearray)):
            if not model:
                raise InvalidArgument("ModelCompiler: the input model bytes are empty. Input model bytes array is "
                                      "empty")
            model = bytes(model)
        else:
            raise InvalidArgument(f"ModelCompiler: the model must be a path or bytes, got {type(model).__name__}. "
                                  f"Unable to load from type '{type(model)}'")
        if get_initializer_location_func is not None:
            raise NotImplemented("ModelCompiler: get_initializer_location_func is not supported; use "
                                 "external_initializers_file_path and external_initializers_size_threshold")
        self._options = sess_options
        self._model = model
        self._external = os.fspath(external_initializers_file_path) if external_initializers_file_path else None
        self._threshold = int(external_initializers_size_threshold)
        self._flags = OrtCompileApiFlags(int(flags))
        self._level = GraphOptimizationLevel(graph_optimization_level)

    def compile_to_file(self, output_model_path: str) -> None:
        """Write the compiled model to `output_model_path` (and its external initializers
        file beside it, when one is named and an initializer is large enough)."""
        if not isinstance(output_model_path, (str, os.PathLike)) or not os.fspath(output_model_path):
            raise InvalidArgument(f"compile_to_file: output_model_path must be a path, got {output_model_path!r}")
        path = os.fspath(output_model_path)
        if self._flags & OrtCompileApiFlags.ERROR_IF_OUTPUT_FILE_EXISTS and os.path.exists(path):
            raise MlrtError(f"compile_to_file: {path} exists already (ERROR_IF_OUTPUT_FILE_EXISTS). Failed to generate "
                            f"EP context model since the file '\"{path}\"' exists already. Please remove the EP "
                            "context model if you want to re-generate it.")
        self._compile(path, self._external)

    def compile_to_bytes(self) -> bytes:
        """The compiled model, serialized (its initializers all inside it)."""
        with tempfile.TemporaryDirectory(prefix="mlrt-compile-") as folder:
            path = os.path.join(folder, "model.onnx")
            self._compile(path, external=None)
            with open(path, "rb") as f:
                return f.read()

    def compile_to_stream(self, write_function) -> None:
        """compile_to_bytes, handed to `write_function(bytes)`."""
        if not callable(write_function):
            raise InvalidArgument(f"compile_to_stream: write_function must be callable, got "
                                  f"{type(write_function).__name__}")
        write_function(self.compile_to_bytes())

    def set_ep_context_data_write_func(self, write_func) -> None:
        """Kept: mlrt makes no EPContext data, so `write_func` is never called."""
        if not callable(write_func):
            raise InvalidArgument("set_ep_context_data_write_func: write_func must be callable")

    def clear_ep_context_data_write_func(self) -> None:
        """Nothing to clear (see set_ep_context_data_write_func)."""

    def set_ep_context_binary_information(self, output_directory, model_name: str) -> None:
        """Kept: mlrt writes no EPContext binaries (the folder must exist, as onnxruntime asks)."""
        if not os.path.isdir(os.fspath(output_directory)):
            raise InvalidArgument(f"set_ep_context_binary_information: {os.fspath(output_directory)} is not a folder. "
                                  "output_dir is not a valid directory.")

    def _compile(self, path: str, external: str | None) -> None:
        """Write the model to `path`, initializers of the threshold's size or more in `external`."""
        from ._session import InferenceSession
        if self._flags & OrtCompileApiFlags.ERROR_IF_NO_NODES_COMPILED:
            raise MlrtError("ModelCompiler: mlrt's execution providers compile no nodes into EPContext nodes "
                            "(ERROR_IF_NO_NODES_COMPILED). Unable to compile any nodes. Check that the session EPs "
                            "support compilation and can execute at least one subgraph in the model.")
        options = SessionOptions()
        options.__dict__.update(vars(self._options))  # (a copy: the caller's options stay as they are)
        options._config = dict(self._options._config)
        options.graph_optimization_level = self._level
        options.optimized_model_filepath = path
        from ..native.save import EXTERNAL_FILE, EXTERNAL_MIN_SIZE
        options._config.pop(EXTERNAL_FILE, None)
        if external:
            options._config[EXTERNAL_FILE] = external
            options._config[EXTERNAL_MIN_SIZE] = str(self._threshold)
        InferenceSession(self._model, options)


def _no_constructor(name: str, why: str):
    def __init__(self, *args, **kwargs):
        raise NotImplemented(f"{name}: {why}")
    return type(name, (), {"__init__": __init__, "__doc__": f"Not supported: {why}."})


_PACKAGES = ("mlrt does not read or write onnxruntime model packages (a model's variants for several execution "
             "providers in one folder); load the .onnx model with InferenceSession")
ModelPackage = _no_constructor("ModelPackage", _PACKAGES)
ModelPackageOptions = _no_constructor("ModelPackageOptions", _PACKAGES)
ModelPackageContext = _no_constructor("ModelPackageContext", _PACKAGES)
ModelPackageComponentContext = _no_constructor("ModelPackageComponentContext", _PACKAGES)
_EP_CONTEXT = "mlrt makes no EPContext data (its providers precompile nothing into a model)"
OrtEpContextData = _no_constructor("OrtEpContextData", _EP_CONTEXT)
OrtEpContextDataBuffer = _no_constructor("OrtEpContextDataBuffer", _EP_CONTEXT)
OrtSyncStream = _no_constructor("OrtSyncStream", "mlrt's providers have no device streams to hand out (the "
                                "OpenCL provider keeps its command queue to itself)")


class ModelPackageWriteMode(OrtEnum):
    PRESERVE = 0
    DENSE = 1


__all__ = ["ModelCompiler", "OrtCompileApiFlags", "OrtExternalInitializerInfo", "OrtEpContextData",
           "OrtEpContextDataBuffer", "OrtSyncStream", "ModelPackage", "ModelPackageOptions", "ModelPackageContext",
           "ModelPackageComponentContext", "ModelPackageWriteMode"]
