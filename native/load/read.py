"""A model's bytes: from a path, bytes or a ModelProto, and the files on disk it is read from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..._errors import InvalidModel, NoSuchFile

if TYPE_CHECKING:
    import onnx

def read_model(source) -> tuple[onnx.ModelProto, Path | None, bytes | None]:
    """The model, the folder its external data may lie in, and the bytes it was read
    from (None for a ModelProto)."""
    import onnx
    if isinstance(source, onnx.ModelProto):
        copy = onnx.ModelProto()
        copy.CopyFrom(source)
        return copy, None, None
    if isinstance(source, (bytes, bytearray, memoryview)):
        try:
            data = bytes(source)
            return onnx.load_model_from_string(data), None, data
        except Exception as exc:  # protobuf raises DecodeError and friends
            raise InvalidModel(f"model bytes ({len(source)} bytes) are not an ONNX model: {exc}") from None
    path = Path(os.fspath(source))
    if not path.exists():
        raise NoSuchFile(f"model file {path} does not exist")
    if not path.is_file():
        raise InvalidModel(f"model path {path} is {'a directory' if path.is_dir() else 'not a regular file'}, "
                           "not a model file")
    try:  # as onnx.load_model reads a path (its format from its extension), keeping the bytes
        form = onnx.serialization.registry.get_format_from_file_extension(path.suffix) or "protobuf"
        data = path.read_bytes()
        return (onnx.load_model_from_string(data, format=form), path.parent.resolve(),
                data if form == "protobuf" else None)
    except Exception as exc:
        raise InvalidModel(f"{path} is not an ONNX model: {exc}") from None

def source_files(source) -> list[str]:
    """The files on disk a model given as `source` is read from: a path's model file and
    the external data files its tensors name (beside it); none for bytes or a ModelProto."""
    if not isinstance(source, (str, os.PathLike)):
        return []
    import onnx
    from onnx import external_data_helper
    path = Path(os.fspath(source))
    try:
        model = onnx.load_model(str(path), load_external_data=False)
    except Exception:  # (it loaded once; whatever it is now, it is no data file of ours)
        return [str(path)]
    found = {str(path)}
    for t in external_data_helper._get_all_tensors(model):
        location = next((e.value for e in t.external_data if e.key == "location"), "")
        if external_data_helper.uses_external_data(t) and location and "\0" not in location:
            found.add(str(path.parent / location))
    return sorted(found)


__all__ = ["read_model", "source_files"]
