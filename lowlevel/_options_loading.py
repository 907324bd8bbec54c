"""SessionOptions' calls about reading the model: load cancellation, and external data
files given in memory (add_external_initializers_from_files_in_memory).  SessionOptions
(_options.py) takes them from LoadingOptions."""

from __future__ import annotations

import operator

from .._errors import InvalidArgument, MlrtError


class LoadingOptions:
    """SessionOptions' load cancellation and external data files in memory: mixed into SessionOptions."""

    def set_load_cancellation_flag(self, value: bool) -> None:
        """True: a session being made with these options (now, or later) stops at its next
        step and raises MlrtError (onnxruntime's ModelLoadCanceled is that class); False
        lets sessions be made again."""
        object.__setattr__(self, "_load_canceled", bool(value))

    def _check_load_canceled(self) -> None:
        if getattr(self, "_load_canceled", False):
            raise MlrtError("Session creation canceled due to user request (SessionOptions.set_load_cancellation_flag)")

    def add_external_initializers_from_files_in_memory(self, names, buffers, lengths) -> None:
        """Give the contents of external data files in memory: a model's tensors whose
        external data `location` is `names[i]` ("./" in front or not) are read from the
        first `lengths[i]` bytes of `buffers[i]` (at their offset and length there)
        instead of from a file, which lets a model given as bytes, or whose data files lie
        elsewhere, be loaded.  Once any are given, every file the model names must be one
        of them (as onnxruntime asks).  A buffer is any object with the buffer protocol
        (bytes, bytearray, memoryview, a numpy array: its bytes in C order), held and
        read when a session is made.  InvalidArgument, adding none, for sequences of
        different lengths, a name given before, a buffer of fewer than `lengths[i]`
        bytes, or the wrong types."""
        from ..native.load import memory_key
        where = "add_external_initializers_from_files_in_memory"
        if any(isinstance(seq, (str, bytes)) for seq in (names, buffers, lengths)):
            raise InvalidArgument(f"{where}: names, buffers and lengths must be sequences (lists), one item per file")
        try:
            names, buffers, lengths = list(names), list(buffers), list(lengths)
        except TypeError as exc:
            raise InvalidArgument(f"{where}: names, buffers and lengths must be sequences: {exc}") from None
        if not len(names) == len(buffers) == len(lengths):
            raise InvalidArgument(f"{where}: {len(names)} name(s), {len(buffers)} buffer(s) and {len(lengths)} "
                                  "length(s): give one of each per file")
        added: dict = {}
        for name, buffer, length in zip(names, buffers, lengths):
            if isinstance(name, bytes):
                name = name.decode("utf-8", "surrogateescape")
            if not isinstance(name, str):
                raise InvalidArgument(f"{where}: a file name must be a str, got {type(name).__name__}")
            key = memory_key(name)
            if key in self._external_files or key in added:
                raise InvalidArgument(f"{where}: a file named '{key}' has been given already")
            try:
                size = operator.index(length)
            except TypeError:
                raise InvalidArgument(f"{where}: the length of '{name}' must be an int, got "
                                      f"{type(length).__name__}") from None
            try:
                with memoryview(buffer) as view:
                    nbytes = view.nbytes
            except TypeError:
                raise InvalidArgument(f"{where}: the buffer of '{name}' must be bytes-like (bytes, bytearray, "
                                      f"memoryview, a numpy array), got {type(buffer).__name__}") from None
            if not 0 <= size <= nbytes:
                raise InvalidArgument(f"{where}: the length of '{name}' is {size}, but its buffer holds {nbytes} "
                                      "bytes (the length must be 0 to that)")
            added[key] = (buffer, size)
        self._external_files.update(added)


__all__ = ["LoadingOptions"]
