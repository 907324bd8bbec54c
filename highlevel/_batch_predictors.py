"""The batch predictors (highlevel/batch.py): callables for ray.data.Dataset.map_batches,
one LearningModelSession each, that turn a batch of rows (images, video frames, table
rows) into the model's output columns beside the columns they pass through."""

from __future__ import annotations

import os

import numpy as np

from .._errors import InvalidArgument, MlrtError
from ..media import VideoFrame
from ._binding import LearningModelBinding
from ._device import LearningModelDevice, LearningModelDeviceKind
from ._model import LearningModel
from ._session import LearningModelSession, LearningModelSessionOptions

ROW = "row"
ON_ERROR = ("raise", "skip")

# the columns a decoding task (decode_images) adds: each row's tensor, and why its input could not be read
TENSOR, DECODE_ERROR = "tensor", "decode_error"


def _unreadable(on_error: str, kind: str, name: str, exc: MlrtError) -> str:
    """An input (a `kind`, e.g. "image", named `name`) that cannot be read: its error
    raised, naming it (on_error "raise"), or the row's "error" text (on_error "skip")."""
    if on_error == "raise":
        raise type(exc)(f"{kind} '{name}': {exc} (on_error=\"skip\", or `mlrt batch --on-error skip`, "
                        "leaves out inputs that cannot be read and lists them)") from None
    return f"{type(exc).__name__}: {exc}"


def _device(device) -> LearningModelDevice:
    if isinstance(device, LearningModelDevice):
        return device
    kinds = {"cpu": LearningModelDeviceKind.CPU, "gpu": LearningModelDeviceKind.GPU,
             "default": LearningModelDeviceKind.DEFAULT}
    kind = kinds.get(str(device).lower())
    if kind is None:
        raise InvalidArgument(f"device must be 'cpu', 'gpu' or a LearningModelDevice, got {device!r}")
    return LearningModelDevice(kind)


def _actor_threads() -> int | None:
    """In a Ray worker (an actor of map_batches): the CPUs Ray gave it (num_cpus, whole;
    at least 1), so that a session does not start a thread per core of a node whose other
    cores Ray has given to other actors.  Elsewhere None (the session's default)."""
    import sys
    ray = sys.modules.get("ray")  # (never imported here: a process Ray did not start has not)
    if ray is None or not ray.is_initialized():
        return None
    try:
        context = ray.get_runtime_context()
        if context.worker.mode != ray._private.worker.WORKER_MODE:
            return None  # (the driver)
        cpus = context.get_assigned_resources().get("CPU", 0)
    except (AttributeError, AssertionError):
        return None
    return max(1, int(cpus))


class _Predictor:
    """One session, made once; subclasses turn a batch's rows into the model's inputs.
    `threads`: the session's intra-op threads (default: the CPUs of the Ray actor it runs
    in, else one per core)."""

    def __init__(self, model, *, device="cpu", threads: int | None = None, keep_columns=None, on_error="raise",
                 filesystem=None):
        if on_error not in ON_ERROR:
            raise InvalidArgument(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        if filesystem is not None:
            from ._batch_fs import _as_pyarrow
            filesystem = _as_pyarrow(filesystem)
        self.filesystem = filesystem  # (where the rows' paths lie: None, this machine's files)
        if threads is None:
            threads = _actor_threads()
        self.threads = threads
        self.on_error = on_error
        self.errors: list[dict] = []  # inputs that could not be read (on_error="skip"): {"row", "input", "error"}, oldest first
        self._bad: list[tuple[int, str, str]] = []  # this batch's: (index in the batch, input, error)
        self._seen: dict = {}  # output name -> (dtype, shape of a row) of the last batch that had rows
        self.model = model if isinstance(model, LearningModel) else LearningModel.load(model)
        # batch_size_override=0: a free batch dimension stays free, so a batch runs as one
        options = LearningModelSessionOptions(batch_size_override=0, intra_op_num_threads=threads)
        self.session = LearningModelSession(self.model, _device(device), options)
        self.keep_columns = None if keep_columns is None else list(keep_columns)
        self.outputs = [d.name for d in self.model.output_features]

    def __call__(self, batch: dict):
        """The batch's rows in mlrt's output schema (highlevel/_batch_io.py, _output_table), a
        pyarrow.Table: "row" and the columns passed through, the model's outputs, "error".
        A row whose input could not be read (on_error="skip") keeps its place: its outputs
        null, "error" saying why."""
        from ._batch_io import _output_table
        if not isinstance(batch, dict) or not batch:
            raise InvalidArgument(f"a batch is a dict of column -> array, got {type(batch).__name__}")
        n = len(next(iter(batch.values())))
        self._bad = []
        results = self.predict(batch, n)
        kept = {name: batch[name] for name in self._kept(batch) if name not in results}
        why = {i: error for i, _, error in self._bad}
        good = [i for i in range(n) if i not in why]
        if self._bad:
            rows = batch.get(ROW)
            self.errors += [{"row": int(rows[i]) if rows is not None else None, "input": what, "error": error}
                            for i, what, error in self._bad]
        for name, value in results.items():  # (an all-bad batch's null outputs take the types seen before)
            if len(value):
                self._seen[name] = (np.asarray(value).dtype, np.asarray(value).shape[1:])
        return _output_table(kept, results, n, good, [why.get(i) for i in range(n)])

    def _unreadable(self, index: int, kind: str, name: str, exc: MlrtError) -> None:
        """Input `index` of the batch (a `kind`, e.g. "image", named `name`) cannot be
        read: raise, naming it, or (on_error="skip") note it: its row's outputs are null."""
        self._bad.append((index, name, _unreadable(self.on_error, kind, name, exc)))

    def _empty(self) -> dict:
        """The outputs of a batch none of whose inputs could be read: no rows, of the types and
        sizes of the outputs this predictor made before (else the declared ones)."""
        out = {}
        for name in self.outputs:
            f = self.session._feature(name)
            dtype, dims = self._seen.get(name, (f.dtype if f.dtype is not None else np.float32,
                                                tuple(d or 0 for d in (f.shape or (None,))[1:])))
            out[name] = np.empty((0, *dims), dtype)
        return out

    def _kept(self, batch: dict) -> list[str]:
        """The columns passed through: `keep_columns` (with "row"), else all but the pixels
        (decoded, or an encoded file's bytes)."""
        if self.keep_columns is None:
            return [c for c in batch if c not in ("image", "bytes", TENSOR, DECODE_ERROR)]
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


def _read_remote(fs, path: str) -> bytes:
    """A file's bytes on another filesystem; an InvalidArgument where it cannot be read."""
    from ._batch_fs import read_bytes
    try:
        return read_bytes(fs, path)
    except OSError as exc:
        raise InvalidArgument(f"cannot be read ({exc})") from None


class ImagePredictor(_Predictor):
    """Classify, detect or embed images: rows hold a path (column "path"), an encoded
    image's bytes (column "bytes", as ray.data.read_binary_files gives them: decoded from
    memory, never opened again by path) or a decoded [H, W, C] uint8 array (column "image";
    `frame_format` its channel order: None for OpenCV's BGR, "RGB8" for Ray's
    read_images); `column` names another.  Paths on another filesystem: `filesystem` (a
    pyarrow.fs.FileSystem or an fsspec one) reads their bytes.  `input` names
    the model's image input (default: its one image-like input); the bind properties
    (`bitmap_pixel_format`, `pixel_range`, `mean`, `std`) apply to every frame.  A batch
    runs as one evaluation where the model's batch dimension is free, else in steps of
    its fixed batch size."""

    def __init__(self, model, *, input: str | None = None, column: str | None = None, frame_format=None,
                 device="cpu", threads: int | None = None, keep_columns=None, on_error="raise", filesystem=None,
                 **bind_properties):
        super().__init__(model, device=device, threads=threads, keep_columns=keep_columns, on_error=on_error,
                         filesystem=filesystem)
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
        return _read_frames(batch, self.column, self.frame_format, self.filesystem, self._unreadable)

    def predict(self, batch: dict, n: int) -> dict:
        if TENSOR in batch:  # decoded and tensorized by decode_images, in Ray Data's tasks
            return self._predict_tensors(batch, n)
        frames = self._frames(batch, n)
        if not frames:  # no input of the batch could be read (on_error="skip")
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


    def _predict_tensors(self, batch: dict, n: int) -> dict:
        # (a column of None only arrives through Arrow as nulls, in numpy as NaN: text is an error)
        why = [v if isinstance(v, str) else None for v in batch.get(DECODE_ERROR, [None] * n)]
        good = [i for i in range(n) if why[i] is None]
        self._bad += [(i, _row_name(batch, self.column, i), why[i]) for i in range(n) if why[i] is not None]
        if not good:
            return self._empty()
        tensor = _dense(np.asarray(batch[TENSOR]))
        if len(good) < n:
            tensor = tensor[good]
        step = self.feature.shape[0] or len(good)
        parts = [self._evaluate({self.feature.name: tensor[start:start + step]}) for start in range(0, len(good), step)]
        return {name: np.concatenate([p[name] for p in parts]) for name in self.outputs}


def _row_name(batch: dict, column: str | None, i: int) -> str:
    """How an image row is named in errors: its path, else its row number."""
    column = column or next((c for c in ("image", "bytes") if c in batch), "path")
    value = batch[column][i] if column in batch else None
    if column == "path" and value is not None or column not in ("image", "bytes") and \
            isinstance(value, (str, os.PathLike)):
        return os.fsdecode(value)
    if "path" in batch:  # (read_binary_files(include_paths=True))
        return os.fsdecode(batch["path"][i])
    return f"row {int(batch[ROW][i])}" if ROW in batch else f"row {i} of the batch"


def _read_frames(batch: dict, column: str | None, frame_format, filesystem, unreadable) -> list[VideoFrame]:
    """The batch's images as frames: from paths (on `filesystem` where given), encoded
    bytes or decoded pixels; a row that cannot be read goes to unreadable(i, "image",
    name, exc), which raises or notes it."""
    column = column or next((c for c in ("image", "bytes") if c in batch), "path")
    if column not in batch:
        raise InvalidArgument(f"ImagePredictor: no column '{column}' in the batch (columns: {', '.join(batch)})")
    frames = []
    for i, value in enumerate(batch[column]):
        encoded = isinstance(value, (bytes, bytearray, memoryview)) and column != "path"  # (bytes in "path": a path)
        kind = "encoded" if encoded else "file" if isinstance(value, (str, bytes, os.PathLike)) else "pixels"
        name = _row_name(batch, column, i)
        try:
            if kind == "file" and filesystem is not None:  # (its bytes read there, decoded here)
                kind, value = "encoded", _read_remote(filesystem, name)
            frames.append(VideoFrame.from_file(name) if kind == "file" else
                          VideoFrame.from_bytes(value, name) if kind == "encoded" else
                          VideoFrame.from_numpy(np.asarray(value), frame_format))
        except MlrtError as exc:
            unreadable(i, "image", name, exc)
    return frames


def image_target(model, input: str | None = None, **bind_properties):
    """The tensor image (mlrt.media's ImageTarget) a model's image input takes from frames
    under these bind properties (as ImagePredictor binds them), without a session."""
    from ._binding import Feature
    model = model if isinstance(model, LearningModel) else LearningModel.load(model)
    features = [Feature(d, tuple(s if isinstance(s, int) and s > 0 else None for s in d.shape)
                        if getattr(d, "shape", None) else None, True, model.metadata) for d in model.input_features]
    found = [f for f in features if (f.name == input if input is not None else f.image_layout() is not None)]
    if len(found) != 1:
        raise InvalidArgument(f"the model has {len(found)} image-like inputs"
                              f"{'' if input is None else ' named ' + repr(input)}; name one with input=")
    return found[0].image_target(**bind_properties)


def decode_images(batch: dict, *, target, column: str | None = None, frame_format=None, filesystem=None,
                  on_error: str = "raise") -> dict:
    """Ray Data's decoding task of an image job (predict(..., decode="tasks")): the batch's
    images read, decoded and tensorized for `target` (image_target(model)), one tensor row
    each in column "tensor", zeros where an input could not be read and "decode_error"
    saying why (on_error="skip"; "raise": its error, naming it).  The columns passed
    through stay; the pixels and bytes go.  ImagePredictor evaluates such batches as they
    are."""
    from ..media import tensorize
    n = len(next(iter(batch.values())))
    why: dict[int, str] = {}

    def unreadable(i, kind, name, exc):
        why[i] = _unreadable(on_error, kind, name, exc)
    frames = _read_frames(batch, column, frame_format, filesystem, unreadable)
    shape = (target.height, target.width, target.channels) if target.nhwc else \
        (target.channels, target.height, target.width)
    tensor = np.zeros((n, *shape), target.dtype)
    if frames and not why:  # (written in place)
        tensorize(frames, target, out=tensor)
    elif frames:
        tensor[[i for i in range(n) if i not in why]] = tensorize(frames, target)[0]
    out = {k: v for k, v in batch.items() if k not in ("image", "bytes")}
    out[TENSOR] = tensor
    out[DECODE_ERROR] = np.array([why.get(i) for i in range(n)], dtype=object)
    return out


class VideoFramePredictor(ImagePredictor):
    """ImagePredictor over video frames: rows hold the video's path (column "path")
    and the frame's index (column "frame").  Each run of consecutive frames of one
    video is decoded by one seek and sequential reads (OpenCV)."""

    def _frames(self, batch: dict, n: int) -> list[VideoFrame]:
        if self.filesystem is not None:
            raise InvalidArgument("VideoFramePredictor: videos are read by OpenCV from this machine's files, not "
                                  "through a filesystem")
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
            values = [_dense(np.asarray(batch[c])) for c in columns]
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
        a = _dense(a)
        if shape is not None and len(shape) == 2 and a.ndim == 1:
            a = a.reshape(-1, 1)
        if want is not None and a.dtype != want:
            if want == object:
                a = a.astype(str).astype(object)
            elif a.dtype.kind in "biuf":
                a = a.astype(want)
        return a


def _dense(a: np.ndarray) -> np.ndarray:
    """A column whose rows are arrays (as Arrow list columns arrive in numpy batches) as one
    [rows, ...] array; other columns as they are."""
    if a.dtype == object and len(a) and isinstance(a[0], (np.ndarray, list)):
        return np.stack([np.asarray(v) for v in a])
    return a


_PREDICTORS = {"image": ImagePredictor, "video": VideoFramePredictor, "table": TabularPredictor}

__all__ = ["ImagePredictor", "ON_ERROR", "ROW", "TabularPredictor", "VideoFramePredictor", "decode_images",
           "image_target"]
