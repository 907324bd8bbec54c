"""Batch inference over many images, video frames or table rows: on Ray Data across
machines, or on a process pool on this one (docs/batch.md).

The predictors are callables made for `ray.data.Dataset.map_batches`: constructed once
per actor (one session each, on the device asked for), then called with a batch of rows
as a dict of column -> numpy array, they return the model's outputs as columns, beside
the columns they pass through.

    ds = ray.data.from_items([{"row": i, "path": p} for i, p in enumerate(paths)])
    ds = ds.map_batches(ImagePredictor, fn_constructor_kwargs={"model": "net.onnx"},
                        concurrency=4, batch_size=32, num_cpus=1, batch_format="numpy")
    ds.write_parquet("out/")

`predict(model, inputs, output, engine="ray" | "local")` builds that whole pipeline
(read -> tensorize -> infer -> write Parquet); `read_results(output)` reads it back as
arrays in row order.  mlrt ships no scheduler: Ray schedules, or a process pool.

Rows: an image is a path (column "path") or a decoded [H, W, C] array (column
"image"); a video frame is (column "path", column "frame": its index); a table row is
its columns.  Every row carries its number in column "row", so a job's output maps
back to its input whatever order the engine finished in.  An input that cannot be read
(a corrupt image, a frame that does not decode) stops the job with its name, or with
on_error="skip" is left out and listed (row, input, error) in OUTPUT/_errors.jsonl
and in the Summary's `errors`.  Ray and pyarrow are imported only when asked for
(the "ray" and "batch" extras: `pip install ".[ray]"` in a checkout, `"mlrt[ray]"`
from a package index).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .._errors import InvalidArgument, MlrtError
from ..media import VideoFrame
from ._binding import LearningModelBinding
from ._device import LearningModelDevice, LearningModelDeviceKind
from ._model import LearningModel
from ._session import LearningModelSession, LearningModelSessionOptions

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
VIDEO_SUFFIXES = {".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv"}
ROW = "row"
ERRORS_FILE = "_errors.jsonl"  # in a job's output folder: the inputs on_error="skip" left out (Parquet readers
                               # pass over names starting with "_")
ON_ERROR = ("raise", "skip")
_SHAPE_KEY = b"mlrt:shape"  # field metadata of a column whose rows are arrays: their shape, JSON


def _device(device) -> LearningModelDevice:
    if isinstance(device, LearningModelDevice):
        return device
    kinds = {"cpu": LearningModelDeviceKind.CPU, "gpu": LearningModelDeviceKind.GPU,
             "default": LearningModelDeviceKind.DEFAULT}
    kind = kinds.get(str(device).lower())
    if kind is None:
        raise InvalidArgument(f"device must be 'cpu', 'gpu' or a LearningModelDevice, got {device!r}")
    return LearningModelDevice(kind)


class _Predictor:
    """One session, made once; subclasses turn a batch's rows into the model's inputs."""

    def __init__(self, model, *, device="cpu", threads: int | None = None, keep_columns=None, on_error="raise"):
        if on_error not in ON_ERROR:
            raise InvalidArgument(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        self.on_error = on_error
        self.errors: list[dict] = []  # inputs left out (on_error="skip"): {"row", "input", "error"}, oldest first
        self._bad: list[tuple[int, str, str]] = []  # this batch's: (index in the batch, input, error)
        self.model = model if isinstance(model, LearningModel) else LearningModel.load(model)
        # batch_size_override=0: a free batch dimension stays free, so a batch runs as one
        options = LearningModelSessionOptions(batch_size_override=0, intra_op_num_threads=threads)
        self.session = LearningModelSession(self.model, _device(device), options)
        self.keep_columns = None if keep_columns is None else list(keep_columns)
        self.outputs = [d.name for d in self.model.output_features]

    def __call__(self, batch: dict) -> dict:
        if not isinstance(batch, dict) or not batch:
            raise InvalidArgument(f"a batch is a dict of column -> array, got {type(batch).__name__}")
        n = len(next(iter(batch.values())))
        self._bad = []
        results = self.predict(batch, n)
        out = {name: batch[name] for name in self._kept(batch) if name not in results}
        if self._bad:  # (on_error="skip": rows whose input could not be read are left out)
            bad = {i for i, _, _ in self._bad}
            good = np.array([i for i in range(n) if i not in bad], dtype=np.int64)
            out = {name: np.asarray(value)[good] for name, value in out.items()}
            rows = batch.get(ROW)
            self.errors += [{"row": int(rows[i]) if rows is not None else None, "input": what, "error": why}
                            for i, what, why in self._bad]
        out.update(results)
        return out

    def _unreadable(self, index: int, kind: str, name: str, exc: MlrtError) -> None:
        """Input `index` of the batch (a `kind`, e.g. "image", named `name`) cannot be
        read: raise, naming it, or (on_error="skip") note it to be left out."""
        if self.on_error == "raise":
            raise type(exc)(f"{kind} '{name}': {exc} (on_error=\"skip\", or `mlrt batch --on-error skip`, "
                            "leaves out inputs that cannot be read and lists them)") from None
        self._bad.append((index, name, f"{type(exc).__name__}: {exc}"))

    def _empty(self) -> dict:
        """The outputs of a batch whose every input was left out: no rows, of the
        outputs' types (and declared sizes)."""
        out = {}
        for name in self.outputs:
            f = self.session._feature(name)
            shape = (0, *[d or 0 for d in (f.shape or (None,))[1:]])
            out[name] = np.empty(shape, f.dtype if f.dtype is not None else np.float32)
        return out

    def _kept(self, batch: dict) -> list[str]:
        """The columns passed through: `keep_columns` (with "row"), else all but decoded pixels."""
        if self.keep_columns is None:
            return [c for c in batch if c != "image"]
        missing = [c for c in self.keep_columns if c not in batch]
        if missing:
            raise InvalidArgument(f"keep_columns: no column {', '.join(missing)} in the batch "
                                  f"(columns: {', '.join(batch)})")
        return ([ROW] if ROW in batch and ROW not in self.keep_columns else []) + self.keep_columns

    def predict(self, batch: dict, n: int) -> dict:
        raise NotImplementedError

    def _evaluate(self, features: dict) -> dict:
        result = self.session.evaluate_features(features)
        return {name: _column(name, result.outputs[name]) for name in self.outputs}


def _column(name: str, value) -> np.ndarray:
    """An output as a column: an array whose first dimension is the batch.  Sequences of
    maps (scikit-learn's ZipMap) become [rows, keys] arrays in the maps' key order."""
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            keys = list(value[0])
            return np.array([[m[k] for k in keys] for m in value])
        return np.asarray(value)
    a = np.asarray(value)
    if a.ndim == 0:
        raise InvalidArgument(f"output '{name}' is a scalar: batch outputs need a first (batch) dimension")
    return a


class ImagePredictor(_Predictor):
    """Classify, detect or embed images: rows hold a path (column `column`, default
    "path") or a decoded [H, W, C] uint8 array (column "image"; `frame_format` its
    channel order: None for OpenCV's BGR, "RGB8" for Ray's read_images).  `input` names
    the model's image input (default: its one image-like input); the bind properties
    (`bitmap_pixel_format`, `pixel_range`, `mean`, `std`) apply to every frame.  A batch
    runs as one evaluation where the model's batch dimension is free, else in steps of
    its fixed batch size."""

    def __init__(self, model, *, input: str | None = None, column: str | None = None, frame_format=None,
                 device="cpu", threads: int | None = None, keep_columns=None, on_error="raise", **bind_properties):
        super().__init__(model, device=device, threads=threads, keep_columns=keep_columns, on_error=on_error)
        self.feature = self._image_feature(input)
        self.column = column
        self.frame_format = frame_format
        self.bind_properties = bind_properties
        extra = set(bind_properties) - {"bitmap_pixel_format", "pixel_range", "mean", "std"}
        if extra:
            raise InvalidArgument(f"ImagePredictor: unknown option(s) {', '.join(sorted(extra))}")

    def _image_feature(self, name):
        if name is not None:
            return self.session._feature(name)
        found = [f for f in self.session._features.values() if f.is_input and f.image_layout() is not None]
        if len(found) != 1:
            names = ", ".join(f.name for f in found) or "none"
            raise InvalidArgument(f"ImagePredictor: the model has {len(found)} image-like inputs ({names}); "
                                  "name one with input=")
        return found[0]

    def _frames(self, batch: dict, n: int) -> list[VideoFrame]:
        column = self.column or ("image" if "image" in batch else "path")
        if column not in batch:
            raise InvalidArgument(f"ImagePredictor: no column '{column}' in the batch (columns: {', '.join(batch)})")
        frames = []
        for i, value in enumerate(batch[column]):
            is_path = isinstance(value, (str, bytes, os.PathLike))
            try:
                frames.append(VideoFrame.from_file(os.fsdecode(value)) if is_path else
                              VideoFrame.from_numpy(np.asarray(value), self.frame_format))
            except MlrtError as exc:
                row = f"row {int(batch[ROW][i])}" if ROW in batch else f"row {i} of the batch"
                self._unreadable(i, "image", os.fsdecode(value) if is_path else row, exc)
        return frames

    def predict(self, batch: dict, n: int) -> dict:
        frames = self._frames(batch, n)
        if not frames:  # every input of the batch was left out (on_error="skip")
            return self._empty()
        step = self.feature.shape[0] or len(frames) or 1
        parts = []
        for start in range(0, len(frames), step):
            chunk = frames[start:start + step]
            binding = LearningModelBinding(self.session)
            binding.bind(self.feature.name, chunk, **self.bind_properties)
            result = self.session.evaluate(binding)
            parts.append({name: _column(name, result.outputs[name]) for name in self.outputs})
        return {name: np.concatenate([p[name] for p in parts]) for name in self.outputs}


class VideoFramePredictor(ImagePredictor):
    """ImagePredictor over video frames: rows hold the video's path (column "path")
    and the frame's index (column "frame").  Each run of consecutive frames of one
    video is decoded by one seek and sequential reads (OpenCV)."""

    def _frames(self, batch: dict, n: int) -> list[VideoFrame]:
        import cv2
        for column in ("path", "frame"):
            if column not in batch:
                raise InvalidArgument(f"VideoFramePredictor: no column '{column}' in the batch")
        frames, capture, current, at = [], None, None, -1
        try:
            for i, (path, index) in enumerate(zip(batch["path"], batch["frame"])):
                path, index = os.fsdecode(path), int(index)
                if path != current or index != at:
                    if capture is not None:
                        capture.release()
                    capture, current, at = cv2.VideoCapture(path), path, -1
                    if not capture.isOpened():
                        self._unreadable(i, "video", f"{path} frame {index}", InvalidArgument("cannot be opened"))
                        current = None
                        continue
                    if index:
                        capture.set(cv2.CAP_PROP_POS_FRAMES, index)
                ok, pixels = capture.read()
                if not ok:
                    self._unreadable(i, "video", f"{path} frame {index}", InvalidArgument("the frame cannot be read"))
                    current = None  # (seek again for the next one)
                    continue
                frames.append(VideoFrame.from_numpy(pixels, timestamp=index))
                at = index + 1
        finally:
            if capture is not None:
                capture.release()
        return frames


class TabularPredictor(_Predictor):
    """Score table rows (scikit-learn models and the like): each model input takes the
    column of its name (a [rows] column becomes [rows, 1] where the input is 2-D), or,
    for a model of one input, `columns` (default: every column but "row" and
    `keep_columns`) stacked into [rows, len(columns)] in their order."""

    def __init__(self, model, *, columns=None, device="cpu", threads: int | None = None, keep_columns=None,
                 on_error="raise"):
        super().__init__(model, device=device, threads=threads, keep_columns=keep_columns, on_error=on_error)
        self.columns = None if columns is None else list(columns)
        self.inputs = [f for f in self.session._features.values() if f.is_input]

    def predict(self, batch: dict, n: int) -> dict:
        feeds = {}
        named = [f for f in self.inputs if f.name in batch]
        if named and self.columns is None:
            for f in named:
                feeds[f.name] = self._fit(f, np.asarray(batch[f.name]))
        elif len(self.inputs) == 1:
            f = self.inputs[0]
            columns = self.columns or [c for c in batch if c != ROW and c not in (self.keep_columns or ())]
            missing = [c for c in columns if c not in batch]
            if missing:
                raise InvalidArgument(f"TabularPredictor: no column {', '.join(missing)} in the batch")
            values = [np.asarray(batch[c]) for c in columns]
            values = [v.reshape(n, -1) for v in values]
            stacked = np.concatenate(values, axis=1)
            feeds[f.name] = self._fit(f, stacked)
        missing = [f.name for f in self.inputs if f.name not in feeds and f.descriptor.is_required]
        if missing:
            raise InvalidArgument(f"TabularPredictor: the model's input(s) {', '.join(missing)} match no column "
                                  f"(columns: {', '.join(batch)})")
        return self._evaluate(feeds)

    @staticmethod
    def _fit(feature, a: np.ndarray) -> np.ndarray:
        shape, want = feature.shape, feature.dtype
        if shape is not None and len(shape) == 2 and a.ndim == 1:
            a = a.reshape(-1, 1)
        if want is not None and a.dtype != want:
            if want == object:
                a = a.astype(str).astype(object)
            elif a.dtype.kind in "biuf":
                a = a.astype(want)
        return a


_PREDICTORS = {"image": ImagePredictor, "video": VideoFramePredictor, "table": TabularPredictor}


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
    columns = {name: _numpy_column(table.schema.field(name), table.column(name)) for name in table.column_names}
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
        flat = column.flatten().to_numpy(zero_copy_only=False)
        return flat.reshape(len(column), *dims)
    values = column.to_numpy(zero_copy_only=False)
    if values.dtype == object and len(values) and isinstance(values[0], np.ndarray):
        return np.stack(values)
    return values


def _arrow_table(columns: dict):
    """A batch's columns as an Arrow table; array-valued rows are a flat list column
    with their shape in the field's metadata."""
    pa = _pyarrow()
    fields, arrays = [], []
    for name, value in columns.items():
        a = value if isinstance(value, np.ndarray) else np.asarray(value)
        meta = None
        if a.dtype == object and len(a) and isinstance(a[0], np.ndarray):
            arrays.append(pa.array([np.ravel(x) for x in a]))
        elif a.ndim > 1:
            meta = {_SHAPE_KEY: json.dumps(list(a.shape[1:])).encode()}
            flat = pa.array(np.ascontiguousarray(a).reshape(-1))
            arrays.append(pa.FixedSizeListArray.from_arrays(flat, int(np.prod(a.shape[1:]))))
        else:
            arrays.append(pa.array(a))
        fields.append(pa.field(name, arrays[-1].type, metadata=meta))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def read_results(path) -> dict:
    """A job's output folder (or file) as {column: array}, rows in input order."""
    columns = _read_table(Path(path))
    order = np.argsort(columns[ROW], kind="stable")
    return {name: value[order] for name, value in columns.items()}


class Summary(dict):
    """What predict() did: rows (input rows), seconds, rows_per_second, engine, actors,
    output, kind, errors (the inputs left out with on_error="skip": dicts of "row",
    "input", "error") and errors_file (where they are listed, None when none were)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class _Progress:
    """A one-line progress bar on stderr: rows done of all, rate, time left."""

    def __init__(self, total: int, label: str, enabled: bool | None):
        self.total, self.label, self.done, self.start = total, label, 0, time.monotonic()
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def update(self, rows: int) -> None:
        self.done += rows
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.2 or self.done >= self.total):
            self._last = now
            rate = self.done / max(now - self.start, 1e-9)
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            left = (self.total - self.done) / rate if rate else 0.0
            sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} rows "
                             f"{rate:.1f}/s {left:.0f}s left ")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def predict(model, inputs, output, *, engine: str = "local", kind: str | None = None, actors: int | None = None,
            batch_size: int = 32, device="cpu", address: str | None = None, progress: bool | None = None,
            ray_remote_args: dict | None = None, on_error: str = "raise", **predictor_options) -> Summary:
    """Run `model` over `inputs` and write its outputs, with the rows' "row" numbers and
    the columns passed through, as Parquet to the folder `output`.

    inputs: a folder or list of image files, an array or list of decoded images, a
    video file (or a list), a Parquet file or folder, a dict of columns or a DataFrame;
    `kind` ("image", "video", "table") when the guess from `inputs` is wrong.
    engine "ray": Ray Data, on the cluster at `address` (default: a local Ray on
    127.0.0.1 started for the job), `actors` predictors (one session each), with
    `ray_remote_args` for each actor (num_gpus, resources, ...); engine "local": a pool of
    `actors` processes here (default: one per core; a script calling this needs no
    `if __name__ == "__main__":` guard, as the workers do not import it).
    on_error: an input that cannot be read (a corrupt image, a frame that does not
    decode) stops the job, naming it ("raise", the default), or is left out and listed
    in OUTPUT/_errors.jsonl and the Summary's `errors` ("skip").  `progress`: a bar on
    stderr (None: where stderr is a terminal).  Returns a Summary."""
    if engine not in ("local", "ray"):
        raise InvalidArgument(f"engine must be 'local' or 'ray', got {engine!r}")
    if on_error not in ON_ERROR:
        raise InvalidArgument(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise InvalidArgument(f"batch_size must be an int >= 1, got {batch_size!r}")
    if actors is not None and (not isinstance(actors, int) or isinstance(actors, bool) or actors < 1):
        raise InvalidArgument(f"actors must be an int >= 1, got {actors!r}")
    if kind is not None and kind not in _PREDICTORS:
        raise InvalidArgument(f"kind must be one of {', '.join(_PREDICTORS)}, got {kind!r}")
    kind, rows = _rows(inputs, kind)
    if isinstance(model, LearningModel):
        model = model.source()
    model = os.fspath(model) if isinstance(model, os.PathLike) else model
    if isinstance(model, str):
        LearningModel.load(model)  # (a missing or malformed model is refused here, before any worker starts)
    options = dict(predictor_options, model=model, device=device, on_error=on_error)
    output = Path(output)
    start = time.monotonic()
    if engine == "ray":
        actors = actors or 1
        errors = _run_ray(_PREDICTORS[kind], options, rows, output, actors, batch_size, address, ray_remote_args)
    else:
        actors = actors or (os.cpu_count() or 1)
        if _device(device).is_gpu:  # (made here first: no OpenCL device is an error before the job, and the
            options["quiet_device"] = True  # DeviceWarning is said once, here, not by every worker)
        from ._batch_local import run_local
        errors = run_local(_PREDICTORS[kind], options, rows, output, actors, batch_size, progress)
    seconds = time.monotonic() - start
    n = len(rows[ROW])
    errors_file = None
    if errors:
        errors = sorted(errors, key=lambda e: (e["row"] is None, e["row"] or 0))
        errors_file = str(output / ERRORS_FILE)
        with open(errors_file, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in errors)
    return Summary(rows=n, seconds=seconds, rows_per_second=n / seconds if seconds else float("inf"), engine=engine,
                   actors=actors, output=str(output), kind=kind, errors=errors, errors_file=errors_file)


def _prepare_output(output: Path) -> None:
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise InvalidArgument(f"output '{output}' exists and is not an empty folder")
    output.mkdir(parents=True, exist_ok=True)


def ray_init(address: str | None = None, **kwargs):
    """ray.init for mlrt's jobs: the cluster at `address`, else a Ray started here that
    listens on 127.0.0.1 only, without its dashboard, usage reporting off.

    (Ray rewrites a node address of 127.0.0.1 to the machine's own address, and its
    servers then listen on every interface, unless Ray runs in its local-only mode:
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, set here for the Ray this starts.)"""
    ray = _ray()
    if ray.is_initialized():
        return ray
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if address:
        ray.init(address=address, **kwargs)
    else:
        local_only()
        kwargs.setdefault("include_dashboard", False)
        ray.init(_node_ip_address="127.0.0.1", **kwargs)
    return ray


def local_only() -> None:
    """Make the Ray of this process (and of the processes it starts) keep to loopback."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # (read when Ray was imported)
        constants.ENABLE_RAY_CLUSTER = False


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise InvalidArgument('engine="ray" needs Ray Data: pip install "ray[data]" pyarrow (mlrt\'s "ray" extra: '
                              'pip install ".[ray]" in a checkout of mlrt, "mlrt[ray]" from a package index)') from None
    return ray


def ray_dataset(inputs, batch_size: int = 32, kind: str | None = None):
    """The rows of `inputs` (as predict() takes them) as a Ray Dataset, one block per
    batch of `batch_size` rows so that the batches spread over the actors: for
    `map_batches` with a predictor of your own."""
    return _dataset(_ray(), _rows(inputs, kind)[1], batch_size)


def _dataset(ray, rows: dict, batch_size: int):
    n = len(rows[ROW])
    if "image" in rows:  # decoded pixels: Ray's tensor columns
        return ray.data.from_items([{k: v[i] for k, v in rows.items()} for i in range(n)])
    return ray.data.from_arrow([_arrow_table({k: v[i:i + batch_size] for k, v in rows.items()})
                                for i in range(0, n, batch_size)])


def _run_ray(cls, options, rows, output, actors, batch_size, address, remote_args) -> list:
    ray = ray_init(address)
    _prepare_output(output)
    dataset = _dataset(ray, rows, batch_size)
    args = dict(num_cpus=1)
    args.update(remote_args or {})
    options = dict(options, threads=options.get("threads") or max(1, int(args.get("num_cpus") or 1)))
    dataset = dataset.map_batches(cls, fn_constructor_kwargs=options, compute=ray.data.ActorPoolStrategy(size=actors),
                                  batch_size=batch_size, batch_format="numpy", **args)
    dataset.write_parquet(str(output))
    return _left_out(cls, options, rows, output) if options.get("on_error") == "skip" else []


def _left_out(cls, options, rows, output: Path) -> list:
    """The rows a job's predictors left out (on_error="skip"), found as the input rows
    missing from its output, each with why: read here again, as its predictor read it
    (Ray's actors keep what they noted; what failed to read there fails here)."""
    written = set()
    if any(output.glob("*.parquet")):
        written = set(_pyarrow().parquet.read_table(output, columns=[ROW]).column(ROW).to_numpy().tolist())
    missing = np.array([i for i, r in enumerate(rows[ROW]) if int(r) not in written], dtype=np.int64)
    if not len(missing):
        return []
    sub = {k: np.asarray(v)[missing] for k, v in rows.items()}
    why: dict[int, tuple[str, str]] = {}
    if issubclass(cls, ImagePredictor):
        reader = cls.__new__(cls)  # (its reading of inputs only: no model, no session)
        reader.on_error, reader._bad = "skip", []
        reader.column, reader.frame_format = options.get("column"), options.get("frame_format")
        reader._frames(sub, len(missing))
        why = {i: (name, error) for i, name, error in reader._bad}
    out = []
    for i in range(len(missing)):
        name, error = why.get(i, (str(sub["path"][i]) if "path" in sub else f"row {int(sub[ROW][i])}",
                                  "left out by its predictor (this process reads it without error)"))
        out.append({"row": int(sub[ROW][i]), "input": name, "error": error})
    return out


__all__ = ["ImagePredictor", "VideoFramePredictor", "TabularPredictor", "predict", "read_results", "ray_init",
           "ray_dataset", "local_only", "Summary"]
