"""Log severity per session and per run, on Python's `logging` (the "mlrt" logger).

onnxruntime's severities 0-4 (verbose, info, warning, error, fatal) are Python's
DEBUG, INFO, WARNING, ERROR, CRITICAL (SEVERITY_LEVELS below).  Outside a
session the "mlrt" logger's level rules (set_default_logger_severity sets it, or the
app's logging configuration).  While a session is made, and while it runs, its
`SessionOptions.log_severity_level` rules instead -- or the run's
`RunOptions.log_severity_level`, when that is set -- so a message below it is not
emitted, and one at or above it is passed to the handlers even where the logger's own
level is higher (onnxruntime's session logger works so).  -1, the default of both,
means "the default logger's severity".  Handlers keep their own levels.
"""

from __future__ import annotations

import contextvars
import logging
import operator

from .._errors import InvalidArgument

# onnxruntime's logging severities -> Python logging levels of the "mlrt" logger
SEVERITY_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR, 4: logging.CRITICAL}

# the Python level of the session or run in progress in this thread (None: the logger's own level)
_threshold: contextvars.ContextVar = contextvars.ContextVar("mlrt_log_threshold", default=None)


class _SeverityLogger(logging.Logger):
    """The "mlrt" logger: its level gives way to the threshold of the session or run
    in progress."""

    def isEnabledFor(self, level: int) -> bool:
        threshold = _threshold.get()
        if threshold is None:
            return super().isEnabledFor(level)
        if self.disabled or self.manager.disable >= level:
            return False
        return level >= threshold


def logger() -> logging.Logger:
    log = logging.getLogger("mlrt")
    if type(log) is logging.Logger:
        log.__class__ = _SeverityLogger  # (the one object every mlrt module logs through)
    return log


def tag(logid: str) -> str:
    """The prefix of a session's log lines: its SessionOptions.logid in brackets, if it has one."""
    return f"[{logid}] " if logid else ""


def check_severity(value, what: str) -> int:
    """A log_severity_level: an int from -1 (the default logger's) to 4."""
    try:
        level = operator.index(value)
    except TypeError:
        raise InvalidArgument(f"{what} must be an int, got {value!r}") from None
    if not -1 <= level <= 4:
        raise InvalidArgument(f"{what} {level} is out of range: -1 the default logger's severity, 0 verbose, "
                              "1 info, 2 warning, 3 error, 4 fatal")
    return level


def threshold(*severities: int) -> int | None:
    """The Python level of the first severity that is set (>= 0), or None."""
    for s in severities:
        if s >= 0:
            return SEVERITY_LEVELS[s]
    return None


def enter(level: int | None):
    """From now on in this thread, `level` rules the "mlrt" logger (None: its own level);
    returns the token for `leave`."""
    return _threshold.set(level)


def idle() -> bool:
    """Whether no session or run in this thread has set a threshold."""
    return _threshold.get() is None


def debug_off(log: logging.Logger) -> bool:
    """Whether `log` (the "mlrt" logger) drops DEBUG records, where no threshold is in force
    (its own level rules): read from the answer logging keeps per level (cleared whenever
    a level changes), on every run of a tiny model, so it is quick."""
    try:
        return not log._cache[logging.DEBUG]
    except (KeyError, AttributeError):  # (not asked yet, or a logging without the cache)
        return not log.isEnabledFor(logging.DEBUG)


def leave(token) -> None:
    _threshold.reset(token)


logger()
