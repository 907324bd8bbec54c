"""Batch inference over many images, video frames or table rows: on Ray Data across
machines, or on a process pool on this one (docs/batch.md).

The predictors are callables made for `ray.data.Dataset.map_batches`: constructed once
per actor (one session each, on the device asked for, running the CPUs the actor was
given), then called with a batch of rows as a dict of column -> numpy array, they
return a pyarrow.Table in mlrt's output schema (docs/batch.md): "row", the columns they
pass through, the model's outputs, "error".

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
on_error="skip" keeps its row with null outputs and its "error" column saying why, and
is listed (row, input, error) in OUTPUT/_errors.jsonl and in the Summary's `errors`.  Ray and pyarrow are imported only when asked for
(the "ray" and "batch" extras: `pip install ".[ray]"` in a checkout, `"mlrt[ray]"`
from a package index).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .._errors import InvalidArgument
from ._batch_fs import Remote, locate, write_text
from ._batch_io import ERRORS_FILE, ParquetSource, _rows, read_results, table_columns
from ._batch_predictors import (_PREDICTORS, ON_ERROR, ROW, ImagePredictor, TabularPredictor, VideoFramePredictor,
                                _device, decode_images, image_target)
from ._batch_ray import _run_ray, local_only, ray_dataset, ray_init, rows_per_file
from ._model import LearningModel

class Summary(dict):
    """What predict() did: rows (input rows), seconds, rows_per_second, engine, actors,
    output, kind, errors (the inputs on_error="skip" could not read: dicts of "row",
    "input", "error") and errors_file (where they are listed, None when none were)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

def predict(model, inputs, output, *, engine: str = "local", kind: str | None = None, actors: int | None = None,
            batch_size: int = 32, device="cpu", address: str | None = None, progress: bool | None = None,
            ray_remote_args: dict | None = None, on_error: str = "raise", filesystem=None, decode: str = "actors",
            **predictor_options) -> Summary:
    """Run `model` over `inputs` and write its outputs, with the rows' "row" numbers and
    the columns passed through, as Parquet to the folder `output` (Ray Data's writer on
    the Ray engine: the outputs stream to it, never gathered here); with engine="ray" and
    output=None, return the job as a `ray.data.Dataset` of those rows instead, not yet
    run, to go on with (its writes, or iteration, run it).

    inputs: a folder or list of image files, an array or list of decoded images, a
    video file (or a list), a Parquet file or folder, a dict of columns or a DataFrame;
    `kind` ("image", "video", "table") when the guess from `inputs` is wrong.
    engine "ray": Ray Data, on the cluster at `address` (default: a local Ray on
    127.0.0.1 started for the job), `actors` predictors (one session each), with
    `ray_remote_args` for each actor (num_cpus, num_gpus, resources, ...; actors that
    would take every CPU of the cluster each ask for a little less, leaving Ray Data's
    read and write tasks a quarter CPU, which they ask for); an MlrtError in an actor
    (an unreadable input) is raised here as it was, not as Ray's RayTaskError; engine "local": a pool of
    `actors` processes here (default: one per core; a script calling this needs no
    `if __name__ == "__main__":` guard, as the workers do not import it).
    on_error: an input that cannot be read (a corrupt image, a frame that does not
    decode) stops the job, naming it ("raise", the default), or ("skip") keeps its row
    with null outputs and an "error" saying why, listed in OUTPUT/_errors.jsonl and the
    Summary's `errors`.  `progress`: a bar on
    stderr (None: where stderr is a terminal).
    Inputs and output may lie on another filesystem: URIs pyarrow opens (s3://bucket/in,
    gs://..., with options in the query: ?endpoint_override=...) or fsspec does, or paths
    on `filesystem` (a pyarrow.fs.FileSystem or an fsspec filesystem, for both); images
    there are read by the workers, not here.
    decode: where an image job's images are decoded and tensorized: "actors" (in the
    actor or process that holds the session, before it evaluates) or "tasks" (on Ray, Ray
    Data's tasks, a quarter CPU each; on the local engine, a pool of its own of the cores
    the evaluating processes leave; the sessions then only evaluate; for models whose
    image input has a fixed height and width).  Returns a Summary."""
    if engine not in ("local", "ray"):
        raise InvalidArgument(f"engine must be 'local' or 'ray', got {engine!r}")
    if on_error not in ON_ERROR:
        raise InvalidArgument(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise InvalidArgument(f"batch_size must be an int >= 1, got {batch_size!r}")
    if actors is not None and (not isinstance(actors, int) or isinstance(actors, bool) or actors < 1):
        raise InvalidArgument(f"actors must be an int >= 1, got {actors!r}")
    if decode not in ("actors", "tasks"):
        raise InvalidArgument(f"decode must be 'actors' or 'tasks', got {decode!r}")
    if kind is not None and kind not in _PREDICTORS:
        raise InvalidArgument(f"kind must be one of {', '.join(_PREDICTORS)}, got {kind!r}")
    # (Ray's tasks read a Parquet input where they run: a local file only on the Ray started here, whose tasks
    # share this machine; a cluster's nodes get the rows of a local file from here, a remote one they read)
    kind, rows, fs = _rows(inputs, kind, filesystem,
                           lazy_tables=None if engine != "ray" else "all" if address is None else "remote")
    loaded = model if isinstance(model, LearningModel) else None
    if isinstance(model, LearningModel):
        model = model.source()
    model = os.fspath(model) if isinstance(model, os.PathLike) else model
    if isinstance(model, str):
        loaded = LearningModel.load(model)  # (a missing or malformed model is refused here, before any worker starts)
    options = dict(predictor_options, model=model, device=device, on_error=on_error)
    if fs is not None and kind == "image":
        options["filesystem"] = fs  # (the predictors read the images' bytes there)
    target = None
    if decode == "tasks":
        if kind != "image":
            raise InvalidArgument(f'decode="tasks" decodes an image job\'s images apart: this job\'s rows are '
                                  f'{kind} rows')
        bind = {k: predictor_options[k] for k in ("bitmap_pixel_format", "pixel_range", "mean", "std")
                if k in predictor_options}
        target = image_target(loaded if loaded is not None else model, predictor_options.get("input"), **bind)
        if target.height is None or target.width is None:
            raise InvalidArgument(f'decode="tasks": the model\'s image input has a free size ({target.height} x '
                                  f'{target.width}), so its tensors are made where the batch is (decode="actors")')
    if output is None:
        if engine != "ray":
            raise InvalidArgument('output=None (the outputs as a ray.data.Dataset) needs engine="ray"; the local '
                                  "engine writes to a folder")
        return _run_ray(_PREDICTORS[kind], options, rows, None, actors or 1, batch_size, address, ray_remote_args,
                        target=target)
    output = locate(output, filesystem)
    start = time.monotonic()
    if engine == "ray":
        actors = actors or 1
        errors = _run_ray(_PREDICTORS[kind], options, rows, output, actors, batch_size, address, ray_remote_args,
                          rows_per_file(loaded, batch_size) if loaded is not None else None, target)
    else:
        actors = actors or (os.cpu_count() or 1)
        if _device(device).is_gpu:  # (made here first: no OpenCL device is an error before the job, and the
            options["quiet_device"] = True  # DeviceWarning is said once, here, not by every worker)
        from ._batch_local import run_local
        errors = run_local(_PREDICTORS[kind], options, rows, output, actors, batch_size, progress, target)
    seconds = time.monotonic() - start
    n = rows.rows if isinstance(rows, ParquetSource) else len(rows[ROW])
    errors_file = None
    if errors:
        errors = sorted(errors, key=lambda e: (e["row"] is None, e["row"] or 0))
        text = "".join(json.dumps(e) + "\n" for e in errors)
        if isinstance(output, Remote):
            write_text(output.join(ERRORS_FILE), text)
            errors_file = str(output.join(ERRORS_FILE))
        else:
            errors_file = str(output / ERRORS_FILE)
            Path(errors_file).write_text(text)
    return Summary(rows=n, seconds=seconds, rows_per_second=n / seconds if seconds else float("inf"), engine=engine,
                   actors=actors, output=str(output), kind=kind, errors=errors, errors_file=errors_file)

__all__ = ["ImagePredictor", "VideoFramePredictor", "TabularPredictor", "predict", "read_results", "table_columns",
           "ray_init", "ray_dataset", "local_only", "Summary", "decode_images", "image_target"]
