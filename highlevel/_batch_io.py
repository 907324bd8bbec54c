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

def _rows(inputs, kind: str | None, filesystem=None, lazy_tables: str | None = None) -> tuple[str, dict, object]:
    """(kind, columns, filesystem) of the job's rows, each with its number in "row";
    filesystem: the pyarrow FileSystem their paths are on (None: this machine's).  With
    lazy_tables "all" (or "remote": on another filesystem only), Parquet inputs come as a
    ParquetSource in place of the columns: read where the job runs, only their footers
    here."""
    if isinstance(inputs, str) and inputs.startswith("file://"):  # (a local path as a URI)
        inputs = inputs[len("file://"):]
    elif isinstance(inputs, (list, tuple)) and any(isinstance(p, str) and p.startswith("file://") for p in inputs):
        inputs = [p[len("file://"):] if isinstance(p, str) and p.startswith("file://") else p for p in inputs]
    remote = _remote_inputs(inputs, filesystem)
    if lazy_tables and kind in (None, "table"):
        where = remote if remote is not None else [Path(inputs)] if lazy_tables == "all" and \
            isinstance(inputs, (str, os.PathLike)) else None
        if where is not None and _parquet_files(where):
            return "table", ParquetSource(where), remote[0].fs if remote is not None else None
    if remote is not None:
        return (*_remote_rows(remote, kind), remote[0].fs)
    return (*_local_rows(inputs, kind), None)


def _parquet_files(where: list) -> list[str]:
    """The Parquet files of the inputs (Paths, or Remotes on one filesystem), sorted as
    pyarrow's dataset reader takes them; [] where they are not Parquet."""
    from ._batch_fs import Remote, info, listing
    files = []
    for w in where:
        if isinstance(w, Remote):
            import pyarrow.fs as pafs
            found = info(w)
            files += [f for f in (listing(w) if found.type == pafs.FileType.Directory else
                                  [w.path] if found.type == pafs.FileType.File else []) if f.endswith(".parquet")]
        elif w.is_dir():
            files += sorted(str(f) for f in w.rglob("*.parquet") if not f.name.startswith(("_", ".")))
        elif w.suffix.lower() == ".parquet" and w.exists():
            files.append(str(w))
    return files


class ParquetSource:
    """A Parquet input read where the job runs -- by Ray Data's read tasks -- of which the
    driver reads only the footers: the files' row groups, each with the number of its
    first row, so that rows keep their numbers ("row", where the files have none) however
    the groups are spread."""

    def __init__(self, where: list):
        from ._batch_fs import Remote
        pq = _pyarrow().parquet
        self.fs = where[0].fs if isinstance(where[0], Remote) else None
        self.groups: list[tuple[str, int, int]] = []  # (file, row group, its first row)
        self.rows, self.has_row = 0, False
        for i, f in enumerate(_parquet_files(where)):
            try:
                meta = pq.ParquetFile(f, filesystem=self.fs)
            except (_pyarrow().ArrowException, OSError) as exc:
                raise InvalidArgument(f"'{f}' is not a Parquet file ({exc})") from None
            if i == 0:
                self.has_row = ROW in meta.schema_arrow.names
            for g in range(meta.metadata.num_row_groups):
                self.groups.append((f, g, self.rows))
                self.rows += meta.metadata.row_group(g).num_rows

    def dataset(self, ray, cpus: float):
        """The rows as a Ray Dataset: one read task per row group, `cpus` each."""
        items = ray.data.from_items([{"file": f, "group": g, "first": r} for f, g, r in self.groups])
        return items.map_batches(_read_groups, fn_kwargs={"fs": self.fs, "has_row": self.has_row}, batch_size=1,
                                 batch_format="pyarrow", num_cpus=cpus)


def _read_groups(items, fs, has_row: bool):
    """Ray Data's read task of a ParquetSource: its row groups, numbered."""
    pa = _pyarrow()
    tables = []
    for f, g, first in zip(items.column("file").to_pylist(), items.column("group").to_pylist(),
                           items.column("first").to_pylist()):
        table = pa.parquet.ParquetFile(f, filesystem=fs).read_row_group(g)
        if not has_row:
            table = table.add_column(0, ROW, pa.array(np.arange(first, first + table.num_rows, dtype=np.int64)))
        tables.append(table)
    return pa.concat_tables(tables)


def _remote_inputs(inputs, filesystem) -> list | None:
    """The inputs' Remote locations (highlevel/_batch_fs.py), or None where they are local
    files or not files at all."""
    from ._batch_fs import Remote, locate
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs) \
        if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(p, (str, os.PathLike)) for p in inputs) \
        else None
    if items is None:
        return None
    where = [locate(p, filesystem) for p in items]
    if not any(isinstance(w, Remote) for w in where):
        return None
    if not all(isinstance(w, Remote) for w in where) or len({w.fs.type_name for w in where}) != 1:
        raise InvalidArgument("the inputs lie on different filesystems: a job reads them from one")
    return where


def _remote_rows(where: list, kind: str | None) -> tuple[str, dict]:
    """(kind, columns) of inputs on another filesystem: image files (the predictors read
    their bytes there) or Parquet (read here)."""
    import pyarrow.fs as pafs
    from ._batch_fs import info, listing
    files = []
    for w in where:
        found = info(w)
        if found.type == pafs.FileType.NotFound:
            raise InvalidArgument(f"input '{w}' does not exist")
        files += listing(w) if found.type == pafs.FileType.Directory else [w.path]
    suffixes = {Path(f).suffix.lower() for f in files}
    if kind is None:
        kind = "table" if ".parquet" in suffixes else "video" if suffixes & VIDEO_SUFFIXES else "image"
    if kind == "video":
        raise InvalidArgument(f"input '{where[0]}': videos are read by OpenCV from this machine's files; copy them "
                              "here first")
    if kind == "table":
        return kind, _read_table(where[0] if len(where) == 1 else where)
    paths = [f for f in files if Path(f).suffix.lower() in IMAGE_SUFFIXES] if len(where) > 1 or \
        info(where[0]).type == pafs.FileType.Directory else files
    if not paths:
        raise InvalidArgument(f"input '{where[0]}' holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
    return kind, {ROW: np.arange(len(paths)), "path": np.array(paths, dtype=object)}


def _local_rows(inputs, kind: str | None) -> tuple[str, dict]:
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


def _read_table(path) -> dict:
    """A Parquet file or folder (a Path, a Remote, or a list of Remotes on one filesystem)
    as {column: array}, with "row" numbers where it has none."""
    from ._batch_fs import Remote
    pa = _pyarrow()
    where = path[0] if isinstance(path, list) else path
    if not isinstance(where, Remote) and not path.exists():
        raise InvalidArgument(f"'{path}' does not exist")
    try:
        if isinstance(where, Remote):
            table = pa.parquet.read_table([p.path for p in path] if isinstance(path, list) else where.path,
                                          filesystem=where.fs)
        else:
            table = pa.parquet.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidArgument(f"'{where}' is not a Parquet file or folder of them ({exc})") from None
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


def read_results(path, filesystem=None) -> dict:
    """A job's output folder (or file) as {column: array}, rows in input order: a local
    path, a URI (s3://bucket/out, ...) or a path on `filesystem` (as predict() takes them)."""
    from ._batch_fs import locate
    columns = _read_table(locate(path, filesystem))
    order = np.argsort(columns[ROW], kind="stable")
    return {name: value[order] for name, value in columns.items()}

def _write_part(table, output, name: str) -> None:
    """One Parquet file of a job's output folder (a Path or a Remote)."""
    from ._batch_fs import Remote
    if isinstance(output, Remote):
        _pyarrow().parquet.write_table(table, output.join(name).path, filesystem=output.fs)
    else:
        _pyarrow().parquet.write_table(table, output / name)


def _prepare_output(output) -> None:
    """The output folder (a Path or a Remote): absent or empty, then made."""
    from ._batch_fs import Remote, prepare_output
    if isinstance(output, Remote):
        return prepare_output(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InvalidArgument(f"output '{output}' exists and is not an empty folder")
    output.mkdir(parents=True, exist_ok=True)

__all__ = ["read_results", "table_columns"]
