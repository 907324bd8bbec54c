"""A batch job's rows and files (highlevel/batch.py): inputs (image folders, videos,
arrays, Parquet, dicts, DataFrames) as rows, and results as Arrow tables written to and
read back from Parquet (pyarrow, imported when first needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .._errors import InvalidArgument
from ._batch_predictors import ROW

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
VIDEO_SUFFIXES = {".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv"}

ERROR = "error"  # the output column saying why a row's input could not be read (null: it was)
ERRORS_FILE = "_errors.jsonl"  # in a job's output folder: the inputs on_error="skip" could not read (Parquet readers
                               # pass over names starting with "_")

_SHAPE_KEY = b"mlrt:shape"  # field metadata of a column whose rows are arrays: their shape, JSON

# -- the job: rows in, Parquet out --------------------------------------------------------------------

def _rows(inputs, kind: str | None) -> tuple[str, dict]:
    """(kind, columns) of the job's rows, each with its number in "row"."""
    if isinstance(inputs, (str, os.PathLike)):
        path = Path(inputs)
        if not path.exists():
            raise InvalidArgument(f"input '{path}' does not exist")
        if kind is None:
            kind = _kind_of_path(path)
        if kind == "table":
            return kind, _read_table(path)
        if kind == "video":
            return kind, _video_rows([path])
        paths = sorted(p for p in path.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES) if path.is_dir() else [path]
        if not paths:
            raise InvalidArgument(f"input folder '{path}' holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        return kind, {ROW: np.arange(len(paths)), "path": np.array([str(p) for p in paths], dtype=object)}
    if isinstance(inputs, np.ndarray) and inputs.ndim == 4 or \
            isinstance(inputs, (list, tuple)) and inputs and isinstance(inputs[0], np.ndarray):
        images = list(inputs)
        return kind or "image", {ROW: np.arange(len(images)), "image": _object_column(images)}
    if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(p, (str, os.PathLike)) for p in inputs):
        paths = [str(p) for p in inputs]
        kind = kind or ("video" if Path(paths[0]).suffix.lower() in VIDEO_SUFFIXES else "image")
        if kind == "video":
            return kind, _video_rows([Path(p) for p in paths])
        return kind, {ROW: np.arange(len(paths)), "path": np.array(paths, dtype=object)}
    if hasattr(inputs, "to_dict") and hasattr(inputs, "columns"):  # a pandas DataFrame
        inputs = {str(c): inputs[c].to_numpy() for c in inputs.columns}
    if isinstance(inputs, dict):
        columns = {str(k): np.asarray(v) for k, v in inputs.items()}
        sizes = {len(v) for v in columns.values()}
        if len(sizes) != 1:
            raise InvalidArgument(f"the input's columns have different lengths ({sorted(sizes)})")
        n = sizes.pop()
        if ROW not in columns:
            columns = {ROW: np.arange(n), **columns}
        return kind or "table", columns
    raise InvalidArgument("inputs must be a folder or list of images, a video, a Parquet file or folder, a dict of "
                          f"columns, a DataFrame or an array of images; got {type(inputs).__name__}")


def _object_column(items) -> np.ndarray:
    column = np.empty(len(items), dtype=object)
    column[:] = [np.asarray(i) for i in items]
    return column


def _kind_of_path(path: Path) -> str:
    if path.suffix.lower() == ".parquet" or path.is_dir() and any(path.glob("*.parquet")):
        return "table"
    if path.suffix.lower() in VIDEO_SUFFIXES:
        return "video"
    return "image"


def _video_rows(paths) -> dict:
    import cv2
    names, frames = [], []
    for path in paths:
        capture = cv2.VideoCapture(str(path))
        if not capture.isOpened():
            raise InvalidArgument(f"video '{path}': cannot be opened")
        count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        if count <= 0:  # no count in the container: read through once
            count = 0
            while capture.grab():
                count += 1
        capture.release()
        names += [str(path)] * count
        frames += range(count)
    return {ROW: np.arange(len(frames)), "path": np.array(names, dtype=object), "frame": np.array(frames)}


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise InvalidArgument('Parquet needs pyarrow: pip install pyarrow (mlrt\'s "batch" extra: pip install '
                              '".[batch]" in a checkout of mlrt, "mlrt[batch]" from a package index)') from None
    return pyarrow


def _read_table(path: Path) -> dict:
    pa = _pyarrow()
    if not path.exists():
        raise InvalidArgument(f"'{path}' does not exist")
    try:
        table = pa.parquet.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidArgument(f"'{path}' is not a Parquet file or folder of them ({exc})") from None
    columns = table_columns(table)
    if ROW not in columns:
        columns = {ROW: np.arange(table.num_rows), **columns}
    return columns


def _numpy_column(field, column) -> np.ndarray:
    """A Parquet column as an array: rows that are arrays (mlrt's own, or Ray's tensor
    columns read without Ray) stacked to [rows, *shape]; strings as objects."""
    meta = field.metadata or {}
    shape = meta.get(_SHAPE_KEY) or (meta.get(b"ARROW:extension:metadata")
                                     if meta.get(b"ARROW:extension:name", b"").startswith(b"ray.data.arrow_tensor")
                                     else None)
    if hasattr(column, "combine_chunks"):
        column = column.combine_chunks()
    if hasattr(column.type, "storage_type"):  # an extension type this process knows (Ray's, with Ray imported)
        try:
            return np.asarray(column.to_numpy_ndarray() if hasattr(column, "to_numpy_ndarray") else
                              column.to_numpy(zero_copy_only=False))
        except (TypeError, ValueError, NotImplementedError, AttributeError):  # (pyarrow's errors are these)
            column = column.storage
    if shape is not None:
        dims = json.loads(shape) if not isinstance(shape, (list, tuple)) else shape
        dims = dims.get("shape", dims) if isinstance(dims, dict) else dims
        if column.null_count:  # (rows whose input could not be read: NaN, or None in an object array)
            values = column.values.to_numpy(zero_copy_only=False).reshape(len(column), *dims)
            null = column.is_null().to_numpy(zero_copy_only=False)
            if values.dtype.kind == "f":
                values = values.copy()
                values[null] = np.nan
                return values
            out = np.empty(len(column), dtype=object)
            out[:] = [None if null[i] else values[i] for i in range(len(column))]
            return out
        flat = column.flatten().to_numpy(zero_copy_only=False)
        return flat.reshape(len(column), *dims)
    values = column.to_numpy(zero_copy_only=False)
    if values.dtype == object and len(values) and isinstance(values[0], np.ndarray):
        return np.stack(values)
    return values


def _arrow_table(columns: dict):
    """A batch's columns as an Arrow table; array-valued rows are a flat list column
    with their shape in the field's metadata."""
    return _table([(name, *_arrow_column(value)) for name, value in columns.items()])


def _table(columns: list):
    """An Arrow table of (name, array, field metadata) columns, in that order."""
    pa = _pyarrow()
    fields = [pa.field(name, array.type, metadata=meta) for name, array, meta in columns]
    return pa.Table.from_arrays([array for _, array, _ in columns], schema=pa.schema(fields))


def _arrow_column(value, n: int | None = None, good=None):
    """(Arrow array, field metadata) of a column; with `good` (the indexes, of n rows, that
    `value`'s rows belong to), the other rows null."""
    pa = _pyarrow()
    a = value if isinstance(value, np.ndarray) else np.asarray(value)
    if good is not None and len(good) == n:
        good = None  # (every row present)
    mask = None
    if good is not None:
        mask = np.ones(n, dtype=bool)
        mask[np.asarray(good, dtype=np.int64)] = False
    if a.dtype == object and len(a) and isinstance(a[0], np.ndarray) or a.dtype == object and good is not None:
        items = [np.ravel(x) if isinstance(x, np.ndarray) else x for x in a]
        if good is not None:
            full = [None] * n
            for k, i in enumerate(good):
                full[i] = items[k]
            items = full
        return pa.array(items), None
    if a.ndim > 1:
        meta = {_SHAPE_KEY: json.dumps(list(a.shape[1:])).encode()}
        size = int(np.prod(a.shape[1:]))
        flat = np.ascontiguousarray(a).reshape(len(a), size)
        if good is not None:
            full = np.zeros((n, size), dtype=a.dtype)
            full[np.asarray(good, dtype=np.int64)] = flat
            flat = full
        return pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1)), size,
                                                 mask=None if mask is None else pa.array(mask)), meta
    if good is not None:
        full = np.zeros(n, dtype=a.dtype)
        full[np.asarray(good, dtype=np.int64)] = a
        return pa.array(full, mask=mask), None
    return pa.array(a), None


def _output_table(kept: dict, outputs: dict, n: int, good, errors: list):
    """One batch's rows in mlrt's output schema, whichever engine runs it: "row" and the
    columns passed through (`kept`, n rows each, in the batch's order), the model's outputs
    (`outputs`: the rows at indexes `good`, the others null), then "error" (string: why
    the row's input could not be read, null where it was)."""
    pa = _pyarrow()
    return _table([(name, *_arrow_column(value)) for name, value in kept.items()] +
                  [(name, *_arrow_column(value, n, good)) for name, value in outputs.items()] +
                  [(ERROR, pa.array(errors, type=pa.string()), None)])


def table_columns(table) -> dict:
    """A predictor's output table (or any table in mlrt's output schema) as {column: array},
    as read_results gives them: outputs [rows, ...] (NaN, or None in an object array, in the
    rows whose input could not be read), "error" an object array of strings and None."""
    if not all(hasattr(table, a) for a in ("schema", "column", "column_names")):
        raise InvalidArgument(f"table_columns: expected a pyarrow.Table, got {type(table).__name__}")
    return {name: _numpy_column(table.schema.field(name), table.column(name)) for name in table.column_names}


def read_results(path) -> dict:
    """A job's output folder (or file) as {column: array}, rows in input order."""
    columns = _read_table(Path(path))
    order = np.argsort(columns[ROW], kind="stable")
    return {name: value[order] for name, value in columns.items()}

def _prepare_output(output: Path) -> None:
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InvalidArgument(f"output '{output}' exists and is not an empty folder")
    output.mkdir(parents=True, exist_ok=True)

__all__ = ["read_results", "table_columns"]
