"""The local engine of mlrt.highlevel.batch: a pool of worker processes on this machine,
one predictor (one session) each, made on its first batch, so that a predictor that
cannot be made is an error the job reports, not a broken pool.  Workers start with
`spawn` (a fresh interpreter: no threads or OpenCL state inherited) and do not import
the script that started the job, so it needs no `if __name__ == "__main__":`."""

from __future__ import annotations

import os
import sys
import time
import warnings

from .._errors import MlrtError
from ._batch_io import _prepare_output, _pyarrow, _write_part
from ._batch_predictors import ROW
from ._device import DeviceWarning

_worker = None
_worker_args = None


def _init_worker(cls, options) -> None:
    global _worker_args
    options = dict(options)
    if options.pop("quiet_device", False):  # (the parent has said it)
        warnings.simplefilter("ignore", DeviceWarning)
    _worker_args = (cls, options)


def _work(batch: dict) -> tuple[dict, list]:
    global _worker
    if _worker is None:
        cls, options = _worker_args
        _worker = cls(**options)
    result = _worker(batch)
    errors, _worker.errors = _worker.errors, []
    return result, errors


class _NoMainModule:
    """Within it, worker processes started with `spawn` do not import the script that
    started the job (multiprocessing imports the parent's __main__ file, or module, in
    each child: a script without `if __name__ == "__main__":` would run its job again
    there, and fail).  The workers need nothing of it: the predictor, its options and
    the rows are mlrt's and numpy's.  What a child is told to import is read from
    sys.modules["__main__"] as each one starts, and the pool starts them as work is
    submitted, in this thread; a stand-in without a file or spec, as in an interactive
    interpreter, stands there meanwhile."""

    def __enter__(self):
        import types
        self.main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        return self

    def __exit__(self, *exc):
        if self.main is not None:
            sys.modules["__main__"] = self.main


def run_local(cls, options, rows, output, actors, batch_size, progress, target=None) -> list:
    """Run the job on a pool of `actors` processes (batch.predict(engine="local")), each
    batch's table (the predictors' output schema) written as one Parquet part into
    `output` (a Path, or a Remote: highlevel/_batch_fs.py); the inputs that could not be
    read, as predictors noted them.  With `target` (an image job's ImageTarget), a second
    pool decodes and tensorizes the images (decode_images) for the first, which only
    evaluates, a bounded number of batches ahead."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    _pyarrow()
    _prepare_output(output)
    n = len(rows[ROW])
    count = (n + batch_size - 1) // batch_size
    cores = os.cpu_count() or 1
    decoders = 0 if target is None else max(1, cores - actors)
    options = dict(options, threads=options.get("threads") or max(1, (cores - decoders) // actors))
    bar = _Progress(n, f"mlrt batch ({actors} process{'es' if actors > 1 else ''})", progress)
    errors: list = []
    # spawn, not fork: a worker must not inherit this process's threads and OpenCL state
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(min(actors, max(count, 1)), mp_context=context, initializer=_init_worker,
                               initargs=(cls, options))
    decode = None if target is None else ProcessPoolExecutor(min(decoders, max(count, 1)), mp_context=context)
    batches = [{k: v[i:i + batch_size] for k, v in rows.items()} for i in range(0, n, batch_size)]
    kwargs = dict(target=target, column=options.get("column"), frame_format=options.get("frame_format"),
                  filesystem=options.get("filesystem"), on_error=options.get("on_error", "raise"))
    ahead = 2 * (actors + decoders)  # (batches decoded ahead of the one written: their tensors are large)
    decoding: dict = {}
    inferring: dict = {}
    try:
        if decode is None:
            with _NoMainModule():
                futures = [pool.submit(_work, b) for b in batches]
        for index in range(len(batches)):
            if decode is None:
                future = futures[index]
            else:  # a bounded window: decoded ahead, then evaluated as they come, in order
                with _NoMainModule():
                    for k in range(index, min(index + ahead, len(batches))):
                        if k not in decoding and k not in inferring:
                            decoding[k] = decode.submit(_decode, batches[k], kwargs)
                    for k in range(index, min(index + ahead // 2 + 1, len(batches))):
                        if k not in inferring:
                            inferring[k] = pool.submit(_work, _result(decoding.pop(k)))
                future = inferring.pop(index)
            result, skipped = _result(future)
            errors += skipped
            _write_part(result, output, f"part-{index:05d}.parquet")  # (the predictor's table)
            bar.update(result.num_rows)
    except BrokenProcessPool as exc:
        raise MlrtError(f"a worker process of the local engine died ({exc}); what it printed is above") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # (after an error: the batches not started are dropped)
        if decode is not None:
            decode.shutdown(wait=True, cancel_futures=True)
    return errors


def _decode(batch: dict, kwargs: dict) -> dict:
    from ._batch_predictors import decode_images
    return decode_images(batch, **kwargs)


def _result(future):
    try:
        return future.result()
    except MlrtError as exc:  # (without the worker's traceback chained to it: the message says where)
        raise exc.with_traceback(None) from None


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
