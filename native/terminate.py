"""The terminate flag of the run in progress (RunOptions.terminate, set from another thread).

A run that has RunOptions gets one flag of its own, an `int32_t` the C core can read
(include/mlrt.h: mlrt_plan_run_flagged, mlrt_loop.terminate); RunOptions writes 1 into
it when `terminate` is set.  The flag is the current one for the run's context
(a ContextVar, as the profiler is), so the executor reads it without it being passed
down: C reads it between the nodes of a plan and the iterations of a loop, Python
between pieces, eager nodes and subgraph runs.
"""

from __future__ import annotations

import contextlib
import contextvars

from .._errors import MlrtError

# onnxruntime raises a plain Fail ("Exiting due to terminate flag being set to true"); mlrt a
# plain MlrtError with this message
MESSAGE = "run terminated: RunOptions.terminate was set"

_current: contextvars.ContextVar = contextvars.ContextVar("mlrt_terminate", default=None)


def new_flag():
    """A fresh flag (0), an `int32_t *` cdata of the loaded runtime."""
    from . import _lib
    return _lib.ffi().new("int32_t *")


def current():
    """The flag of the run in progress in this context, or None."""
    return _current.get()


def check() -> None:
    """Raise MlrtError when the run in progress was told to terminate."""
    flag = _current.get()
    if flag is not None and flag[0]:
        raise MlrtError(MESSAGE)


@contextlib.contextmanager
def watching(flag):
    """Make `flag` the current run's terminate flag while the block runs."""
    token = _current.set(flag)
    try:
        yield flag
    finally:
        _current.reset(token)
