"""The external-data guard: a model's tensors kept in other files are read only from
inside the model's own folder (or from files given in memory), every offset and
length checked against the file and the tensor before a byte is read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..._errors import InvalidArgument, InvalidModel, NoSuchFile
from ..tensor_proto import tensor_nbytes

if TYPE_CHECKING:
    import onnx

def load_external(model: onnx.ModelProto, base: Path | None, files: dict | None = None) -> bool:
    """Read the tensors the model keeps in external files into it; True if there were any.

    `files` (SessionOptions.add_external_initializers_from_files_in_memory: memory_key(name)
    -> (buffer, length)) holds files' contents in memory; when there are any, every
    location must be one of them, as onnxruntime asks, and none is read from disk.
    Otherwise each location must name a regular file inside the model's folder once every
    symlink is resolved (no absolute path, no "..", no link leading out).  Either way the
    offset and length must lie inside the file and give exactly the tensor's bytes: all
    checked before a byte is read.  InvalidModel naming the tensor and the file otherwise."""
    import onnx
    from onnx import external_data_helper
    if not _any_external(model.graph.initializer, model.graph.node) \
            and not any(_any_external((), f.node) for f in model.functions):
        return False
    tensors = [t for t in external_data_helper._get_all_tensors(model)
               if external_data_helper.uses_external_data(t)]
    if not tensors:
        return False
    views: dict = {}  # memory_key (and (memory_key, "head")) -> the bytes of a file given in memory
    try:
        for t in tensors:
            if files:
                t.raw_data = _read_in_memory(t, files, views)
            else:
                target, offset, length = _external_span(t, base)
                try:
                    with open(target, "rb") as f:
                        f.seek(offset)
                        t.raw_data = f.read(length)
                except OSError as exc:
                    raise InvalidModel(f"initializer '{t.name}': cannot read external data {target}: {exc}") from None
            del t.external_data[:]
            t.data_location = onnx.TensorProto.DEFAULT
    finally:
        for view in reversed(views.values()):
            view.release()
    return True


def memory_key(name: str) -> str:
    """A file name given in memory, or an external data location, as they are matched:
    leading "./" dropped (so "./w.bin" is "w.bin"), nothing else changed, as onnxruntime
    matches them."""
    return re.sub(r"^(?:\./+)+", "", name)


def _entries(t: onnx.TensorProto) -> tuple[str, int, int | None]:
    """Location, offset and length (None: to the end) of tensor t's external data."""
    entries = {e.key: e.value for e in t.external_data}
    location = entries.get("location", "")
    try:
        offset = int(entries.get("offset") or 0)
        length = int(entries["length"]) if entries.get("length") not in (None, "") else None
    except ValueError as exc:
        raise InvalidModel(f"initializer '{t.name}': external data '{location}' is not usable: {exc}") from None
    return location, offset, length


def _read_in_memory(t: onnx.TensorProto, files: dict, views: dict) -> bytes:
    """Tensor t's bytes from the file given in memory that its location names (see
    load_external); `views` keeps each file's bytes for the next tensors."""
    location, offset, length = _entries(t)
    key = memory_key(location)
    if key not in files:
        raise InvalidModel(f"initializer '{t.name}': its external data file '{location}' is not among the files given "
                           f"in memory ({', '.join(repr(n) for n in files)}); when some are given, every file the "
                           "model names must be (SessionOptions.add_external_initializers_from_files_in_memory)")
    if key not in views:
        buffer, size = files[key]
        whole = views[key] = memory_bytes(buffer)  # (released by the caller, with the view of its first `size`)
        if whole.nbytes < size:
            raise InvalidArgument(f"the buffer given in memory for file '{key}' now holds {whole.nbytes} bytes, "
                                  f"fewer than the {size} its length says")
        views[key, "head"] = whole[:size]
    view = views[key, "head"]
    offset, length = _check_span(t, f"file '{location}' given in memory", offset, length, view.nbytes)
    return view[offset:offset + length].tobytes()


def memory_bytes(buffer) -> memoryview:
    """The bytes of an object with the buffer protocol, in C order, as a flat view (no
    copy where they lie in C order; a copy in that order where they do not)."""
    view = memoryview(buffer)
    if view.c_contiguous:
        return view.cast("B")
    data = view.tobytes()
    view.release()
    return memoryview(data)


def _external_span(t: onnx.TensorProto, base: Path | None) -> tuple[Path, int, int]:
    """The file, offset and length of tensor t's external data, checked (see above)."""
    location, offset, length = _entries(t)
    where = f"initializer '{t.name}': external data"
    if base is None:
        raise InvalidModel(f"{where} file '{location}' cannot be read: the model was given as bytes, so there is no "
                           "folder to find it in; load the model from its path, or give the file's contents with "
                           "SessionOptions.add_external_initializers_from_files_in_memory")
    try:
        target = (base / location).resolve()
    except (ValueError, OSError, RuntimeError) as exc:
        raise InvalidModel(f"{where} '{location}' is not usable: {exc}") from None
    if not location or base not in target.parents:
        raise InvalidModel(f"{where} '{location}' lies outside the model folder {base}")
    if not target.exists():
        raise NoSuchFile(f"{where} file {target} is missing (the model names '{location}', beside it)")
    if not target.is_file():
        raise InvalidModel(f"{where} file {target} is missing or not a regular file")
    offset, length = _check_span(t, f"file {target}", offset, length, target.stat().st_size)
    return target, offset, length


def _check_span(t: onnx.TensorProto, file: str, offset: int, length: int | None, size: int) -> tuple[int, int]:
    """Offset and length of tensor t's bytes in `file` of `size` bytes: inside it and
    exactly the tensor's size (InvalidModel otherwise); a length of None runs to the end."""
    import onnx
    where = f"initializer '{t.name}': external data"
    if offset < 0 or (length is not None and length < 0):
        raise InvalidModel(f"{where} in {file}: negative offset {offset} or length {length}")
    if length is None:
        length = max(size - offset, 0)
    if offset + length > size:
        raise InvalidModel(f"{where}: offset {offset} + length {length} runs past the end of {file} ({size} bytes)")
    need = tensor_nbytes(t)
    if need is not None and length != need:
        raise InvalidModel(f"{where} has {length} bytes at offset {offset} of {file}; its "
                           f"{list(t.dims)} {onnx.TensorProto.DataType.Name(t.data_type).lower()} tensor needs {need}")
    return offset, length

def _any_external(initializers, nodes) -> bool:
    """Whether a tensor onnx's external-data helper visits (these initializers, the
    tensors in these nodes' attributes, and the same in their subgraphs) is stored
    externally: one quick walk, where the helper's generators took milliseconds."""
    import onnx
    external = onnx.TensorProto.EXTERNAL
    if any(t.data_location == external for t in initializers):
        return True
    for node in nodes:
        for a in node.attribute:
            if a.HasField("t") and a.t.data_location == external or any(t.data_location == external for t in a.tensors):
                return True
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                if _any_external(sub.initializer, sub.node):
                    return True
    return False


__all__ = ["load_external", "memory_bytes", "memory_key"]
