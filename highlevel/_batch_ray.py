"""The Ray engine of a batch job (highlevel/batch.py): Ray started or joined (kept to
loopback when started here), the rows as a Dataset, the predictors as an actor pool,
Ray Data's writer, and the rows whose inputs could not be read found in the output."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import numpy as np

from .._errors import InvalidArgument, MlrtError
from ._batch_fs import Remote
from ._batch_io import ERROR, ParquetSource, _arrow_table, _prepare_output, _pyarrow, _rows
from ._batch_predictors import ROW, decode_images

def ray_init(address: str | None = None, **kwargs):
    """ray.init for mlrt's jobs: the cluster at `address`, else a Ray started here (even
    where another runs on this machine) that listens on 127.0.0.1 only, without its
    dashboard, usage reporting off.

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
        # address "local": a Ray of its own, never one found running on this machine
        ray.init(address="local", _node_ip_address="127.0.0.1", **kwargs)
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


def ray_dataset(inputs, batch_size: int = 32, kind: str | None = None, filesystem=None):
    """The rows of `inputs` (as predict() takes them) as a Ray Dataset, one block per
    batch of `batch_size` rows so that the batches spread over the actors: for
    `map_batches` with a predictor of your own (images on another filesystem: give the
    predictor the same `filesystem`, or the URI's, to read them)."""
    return _dataset(_ray(), _rows(inputs, kind, filesystem, lazy_tables="remote")[1], batch_size)


def _dataset(ray, rows, batch_size: int):
    if isinstance(rows, ParquetSource):  # (read by Ray Data's tasks, a quarter CPU each)
        return rows.dataset(ray, IO_CPUS)
    n = len(rows[ROW])
    if "image" in rows:  # decoded pixels: Ray's tensor columns
        return ray.data.from_items([{k: v[i] for k, v in rows.items()} for i in range(n)])
    return ray.data.from_arrow([_arrow_table({k: v[i:i + batch_size] for k, v in rows.items()})
                                for i in range(0, n, batch_size)])


# CPUs of a Ray Data read or write task in mlrt's jobs, and what the actors leave free for
# them: actors that took every CPU of the cluster left the writer none, and the job waited
# for it forever once its outputs filled Ray Data's share of the object store
IO_CPUS = 0.25
# a Parquet file of the writer's gathers up to WRITE_ROWS rows, of up to WRITE_BYTES of
# outputs (a file per batch of 16 rows made its quarter-CPU write tasks the bottleneck of
# a 10,000-image job: 2,000 images 97 -> 120 images/s on two actors)
WRITE_ROWS, WRITE_BYTES = 1024, 32 << 20


def rows_per_file(model, batch_size: int) -> int | None:
    """How many rows the writer gathers into a file for `model` (a LearningModel): as many as
    WRITE_BYTES of its outputs hold (8 bytes an element at most), at most WRITE_ROWS; None
    (a file per block) where an output's size per row is not declared or a file would hold
    a batch or less."""
    per_row = 0
    for f in model.output_features:
        shape = getattr(f, "shape", None)
        if not shape or any(d is None for d in shape[1:]):
            return None
        per_row += 8 * int(np.prod(shape[1:], dtype=np.int64))
    rows = min(WRITE_ROWS, WRITE_BYTES // max(per_row, 1))
    return rows if rows > batch_size else None


def _actor_cpus(ray, actors: int, asked: float, keep: float = IO_CPUS) -> float:
    """The CPUs each of `actors` actors asks for: `asked`, or less where together they would
    leave the cluster less than `keep` for the read, decode and write tasks."""
    total = float(ray.cluster_resources().get("CPU", 0))
    room = total - keep
    if asked <= 0 or room <= 0 or actors * asked <= room:
        return asked
    return max(0.01, int(room / actors * 1000) / 1000)


def _run_ray(cls, options, rows, output, actors, batch_size, address, remote_args, file_rows=None, target=None):
    """The job on Ray Data: its outputs written to `output` by Ray Data's writer (returns
    the rows whose inputs could not be read), or with `output` None the Dataset, not yet run.
    With `target` (an image job's ImageTarget), the images are decoded and tensorized by
    Ray Data's tasks (decode_images), a quarter CPU each, before the actors."""
    ray = ray_init(address)
    if output is not None:
        _prepare_output(output)
    dataset = _dataset(ray, rows, batch_size)
    dataset.context.raise_original_map_exception = True  # (this job's own context: a predictor's error as it is)
    if target is not None:
        dataset = dataset.map_batches(decode_images, batch_size=batch_size, batch_format="numpy", num_cpus=IO_CPUS,
                                      fn_kwargs=dict(target=target, column=options.get("column"),
                                                     frame_format=options.get("frame_format"),
                                                     filesystem=options.get("filesystem"),
                                                     on_error=options.get("on_error", "raise")))
    args = dict(num_cpus=1)
    args.update(remote_args or {})
    asked = float(args.get("num_cpus") or 0)
    args["num_cpus"] = _actor_cpus(ray, actors, asked, IO_CPUS * (2 if target is not None else 1))
    options = dict(options, threads=options.get("threads") or max(1, round(asked or 1)))
    dataset = dataset.map_batches(cls, fn_constructor_kwargs=options, compute=ray.data.ActorPoolStrategy(size=actors),
                                  batch_size=batch_size, batch_format="numpy", **args)
    if output is None:
        return dataset
    remote = isinstance(output, Remote)
    with _mlrt_errors_as_they_are():
        dataset.write_parquet(output.path if remote else str(output), filesystem=output.fs if remote else None,
                              ray_remote_args={"num_cpus": IO_CPUS}, min_rows_per_file=file_rows)
    return _unread(output) if options.get("on_error") == "skip" else []


@contextlib.contextmanager
def _mlrt_errors_as_they_are():
    """Within it, an error Ray raises for a task or actor that failed on an MlrtError (a
    RayTaskError that is also an instance of the error's class) is that MlrtError, raised
    as it was, one line: what a predictor said about a bad input, not Ray's wall of
    tracebacks.  Other errors pass as they are."""
    try:
        yield
    except Exception as exc:
        cause = _mlrt_cause(exc)
        if cause is None or cause is exc:
            raise
        text = str(cause).split("\n", 1)[0]  # (Ray Data appends its retry advice to the message's lines)
        try:
            clean = type(cause)(text)
        except Exception:  # (a class that takes other arguments: as Ray handed it over)
            clean = cause.with_traceback(None)
        raise clean from None


def _mlrt_cause(exc) -> MlrtError | None:
    """The MlrtError an exception is or wraps (through Ray's `cause` and Python's chaining),
    or None.  (Ray raises a task's error as a RayTaskError that is also an instance of the
    error's class: its `cause` is the error itself.)"""
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, MlrtError) and not type(e).__name__.startswith("RayTaskError"):
            return e
        todo += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return None


def _unread(output) -> list:
    """The rows of a job's output (a Path or a Remote) whose input could not be read
    (on_error="skip"), from their "error" column: {"row", "input", "error"} each."""
    remote = isinstance(output, Remote)
    table = _pyarrow().parquet.read_table(output.path if remote else output, filesystem=output.fs if remote else None)
    bad = table.filter(table.column(ERROR).is_valid())
    if not bad.num_rows:
        return []
    names = next((c for c in ("path", "image") if c in bad.column_names and c != "image"), None)
    rows, errors = bad.column(ROW).to_pylist(), bad.column(ERROR).to_pylist()
    inputs = bad.column(names).to_pylist() if names else [f"row {r}" for r in rows]
    frames = bad.column("frame").to_pylist() if "frame" in bad.column_names else None
    if frames is not None:
        inputs = [f"{p} frame {f}" for p, f in zip(inputs, frames)]
    return [{"row": int(r), "input": str(i), "error": e} for r, i, e in zip(rows, inputs, errors)]


__all__ = ["local_only", "ray_dataset", "ray_init"]
