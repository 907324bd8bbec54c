"""Where a batch job's inputs and outputs lie (highlevel/batch.py): a local path, or a
URI on another filesystem -- any pyarrow opens (s3://, gs://, abfs://, hdfs://; options
in the URI's query, credentials from the environment as pyarrow reads them), else any
fsspec opens -- or a path on the `filesystem` given (a pyarrow.fs.FileSystem, or an
fsspec filesystem, wrapped for pyarrow), as Ray Data's readers and writers take them.

A remote location is a Remote(fs, path): fs a pyarrow FileSystem, which pickles, so the
local engine's workers and Ray's tasks and actors open the same files; local ones stay
pathlib Paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from .._errors import InvalidArgument


class Remote(NamedTuple):
    """A location on a filesystem other than this machine's: pyarrow FileSystem, path on it."""

    fs: object
    path: str

    def join(self, name: str) -> "Remote":
        return Remote(self.fs, f"{self.path.rstrip('/')}/{name}")

    def __str__(self) -> str:
        return f"{self.fs.type_name}://{self.path}"


def _as_pyarrow(filesystem):
    """A pyarrow FileSystem for `filesystem` (pyarrow's own, or fsspec's wrapped)."""
    import pyarrow.fs as pafs
    if isinstance(filesystem, pafs.FileSystem):
        return filesystem
    try:
        import fsspec
    except ImportError:
        fsspec = None
    if fsspec is not None and isinstance(filesystem, fsspec.AbstractFileSystem):
        return pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    raise InvalidArgument(f"filesystem must be a pyarrow.fs.FileSystem or an fsspec filesystem, got "
                          f"{type(filesystem).__name__}")


def locate(where, filesystem=None):
    """`where` as a local Path, or a Remote: on `filesystem` when given, else by its URI
    scheme (a file:// URI is local)."""
    if isinstance(where, Remote):
        return where
    text = os.fspath(where) if isinstance(where, os.PathLike) else where
    if not isinstance(text, str):
        raise InvalidArgument(f"a location is a path or a URI, got {type(where).__name__}")
    if filesystem is not None:
        from ._batch_io import _pyarrow
        _pyarrow()
        import pyarrow.fs as pafs
        fs = _as_pyarrow(filesystem)
        if isinstance(fs, pafs.LocalFileSystem):
            return Path(text.removeprefix("file://"))
        return Remote(fs, text.split("://", 1)[-1])
    if "://" not in text:
        return Path(text)
    if text.startswith("file://"):
        return Path(text[len("file://"):])
    from ._batch_io import _pyarrow
    pa = _pyarrow()
    import pyarrow.fs as pafs
    try:
        fs, path = pafs.FileSystem.from_uri(text)
    except (pa.ArrowException, ValueError, OSError) as arrow_error:
        try:
            import fsspec.core
            fs, path = fsspec.core.url_to_fs(text)
        except (ImportError, ValueError, OSError) as exc:  # (ImportError: fsspec, or the package of its scheme)
            raise InvalidArgument(f"'{text}': neither pyarrow nor fsspec opens it ({arrow_error}; {exc})") from None
        return Remote(_as_pyarrow(fs), path)
    return Remote(fs, path)


def info(location: Remote):
    """The pyarrow FileInfo of a remote location; an InvalidArgument naming it where the
    filesystem cannot be reached."""
    try:
        return location.fs.get_file_info(location.path)
    except OSError as exc:
        raise InvalidArgument(f"'{location}': {exc}") from None


def listing(location: Remote) -> list[str]:
    """The files under a remote folder, recursively, sorted."""
    import pyarrow.fs as pafs
    try:
        found = location.fs.get_file_info(pafs.FileSelector(location.path, recursive=True))
    except OSError as exc:
        raise InvalidArgument(f"'{location}': {exc}") from None
    return sorted(f.path for f in found if f.type == pafs.FileType.File)


def read_bytes(fs, path: str) -> bytes:
    """A remote file's bytes (OSError where it cannot be read)."""
    with fs.open_input_stream(path) as f:
        return f.read()


def write_text(location: Remote, text: str) -> None:
    with location.fs.open_output_stream(location.path) as f:
        f.write(text.encode())


def prepare_output(location: Remote) -> None:
    """A remote output folder: absent or empty, then made."""
    import pyarrow.fs as pafs
    found = info(location)
    if found.type == pafs.FileType.File or found.type == pafs.FileType.Directory and listing(location):
        raise InvalidArgument(f"output '{location}' exists and is not an empty folder")
    try:
        location.fs.create_dir(location.path, recursive=True)
    except OSError as exc:
        raise InvalidArgument(f"output '{location}': {exc}") from None
