"""The mlrt exception tree.

    MlrtError                     base of everything mlrt raises on purpose
    ├── InvalidModel              the model file or graph is malformed or inconsistent
    │   └── NoSuchFile            the model path does not exist (also a FileNotFoundError)
    ├── InvalidArgument           a wrong input name, shape, dtype or option value
    │   ├── NoSuchFeature         a feature (input or output) name the model does not have (also a KeyError)
    │   └── NotAvailable          what was asked for is not there: a config entry never set, a view of a format
    │                             a sparse tensor is not in (also a RuntimeError, as onnxruntime raises for these)
    ├── NotImplemented            an operator (op, domain, opset) no provider asked can run
    ├── RuntimeLoadError          the native runtime is missing, broken or incompatible
    ├── DeviceError               an execution device failed
    └── ResourceExhausted         an allocation over a limit, or out of memory

Every message names what went wrong and where (node, input, file) and, where there
is one, what to do about it.  A session that raised is still usable.
"""

from __future__ import annotations

import builtins


class MlrtError(Exception):
    """Base class of every error mlrt raises on purpose."""


class InvalidModel(MlrtError):
    """The model is malformed: bad protobuf, dangling names, cycles, bad attributes."""


class NoSuchFile(InvalidModel, FileNotFoundError):
    """The model path names nothing (onnxruntime's NoSuchFile; also a FileNotFoundError)."""


class InvalidArgument(MlrtError, ValueError):
    """A caller passed something wrong: input name, shape, dtype, option."""

    @classmethod
    def check_shape(cls, shape, where: str) -> tuple:
        """`shape` as a tuple of ints >= 0, or this error naming `where` (the one check of
        a shape argument, for OrtValue's and the high-level Tensor's constructors)."""
        try:
            dims = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            raise cls(f"{where}: shape {shape!r} is not a list of integers") from None
        if any(d < 0 for d in dims):
            raise cls(f"{where}: shape {list(dims)} has a negative dimension")
        return dims


class NoSuchFeature(InvalidArgument, KeyError):
    """A name the model has no input or output of, looked up in a mapping of features
    (`result.outputs[name]`): also a KeyError, as a mapping's lookup raises.  Its message
    names the features that exist."""

    __str__ = BaseException.__str__  # (the message as it is: KeyError's would quote it)


class NotAvailable(InvalidArgument, RuntimeError):
    """What was asked for is not there: a session or run configuration entry never set, a
    view of a format a sparse tensor is not in, a dense array of a sparse value.  Also a
    RuntimeError, the class onnxruntime raises for these, so `except RuntimeError`
    written for onnxruntime catches it."""


class NotImplemented(MlrtError, builtins.NotImplementedError):  # noqa: A001 - the DESIGN name
    """No provider asked for can run an operator at this opset and type."""


class RuntimeLoadError(MlrtError):
    """The native runtime could not be found, loaded or trusted."""


class DeviceError(MlrtError):
    """An execution device reported a failure."""


class ResourceExhausted(MlrtError, MemoryError):
    """An allocation exceeded a limit or the memory available."""


__all__ = ["MlrtError", "InvalidModel", "NoSuchFile", "InvalidArgument", "NoSuchFeature", "NotAvailable",
           "NotImplemented",
           "RuntimeLoadError", "DeviceError", "ResourceExhausted"]
