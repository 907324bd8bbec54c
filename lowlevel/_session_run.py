"""Running an InferenceSession: feeds checked (the quick path for host arrays of the
right type and shape), run / run_with_ort_values / run_with_iobinding / run_async,
a run's log level, custom operators, memory limit and termination put in force, and
the QuickRuns kept for the signatures fed last.  InferenceSession (_session.py) takes
the methods from SessionRuns."""

from __future__ import annotations

import logging
import operator
import threading
import time
from typing import TYPE_CHECKING

import numpy as np

from .._errors import InvalidArgument, MlrtError, NotImplemented
from ..native import ops, profile, providers, terminate
from ..native.plan import memory
from . import _feeds, _logging
from ._options import RunOptions
from ._ortvalue import IOBinding, OrtValue
from ._session_info import _type_string
from ._sparse import SparseTensor

if TYPE_CHECKING:
    from ..native.graph import ValueType

log = _logging.logger()

class SessionRuns:
    """InferenceSession's runs: mixed into InferenceSession."""

    def _check_feeds(self, input_feed) -> dict[str, np.ndarray]:
        if not isinstance(input_feed, dict):
            raise InvalidArgument(f"input_feed must be a dict of name -> array, got {type(input_feed).__name__}")
        feeds = {}
        quick = self._quick_checks
        required = 0  # graph inputs (not overridable initializers) taken on the quick path
        unknown = []
        for name, value in input_feed.items():
            check = quick.get(name)
            if check is not None and type(value) is np.ndarray and value.dtype == check[0]:
                shape = value.shape
                if (shape == check[1] or (len(shape) == check[3] and (check[4] is None or check[4](shape) == check[5]))) \
                        and (not check[6] or _all_str(value)):  # (strings: other elements, bytes, are made str)
                    feeds[name] = value  # the common case, kept quick: a host array of the right type
                    required += check[2]
                    continue
            vt = self._input_types.get(name)
            if vt is None:
                unknown.append(name)
            else:
                feeds[name] = self._check_value(vt, value)
        if required != len(self._inputs) or unknown:
            missing = [a for a in self._inputs if a.name not in feeds]
            if missing or unknown:
                raise _feeds.names_error(self._inputs, input_feed, missing, unknown)
        return feeds

    @staticmethod
    def _check_value(vt: ValueType, value) -> np.ndarray:
        from onnx import helper
        if vt.kind == "sequence":
            if not isinstance(value, (list, tuple)):
                raise InvalidArgument(f"input '{vt.name}': expected a sequence (list of arrays), got {type(value).__name__}")
            return _feeds.sequence(vt.name, vt.type_string, value)
        if vt.kind == "optional":
            if value is None:
                return None
            inner = vt.type_string[len("optional("):-1]
            if inner.startswith("seq("):
                return _feeds.sequence(vt.name, inner, value)
            elem = _feeds.element_type(inner)
            return _feeds.tensor(vt.name, elem, f"tensor({_feeds.type_name(elem)})", value)
        if vt.kind == "map":
            if not isinstance(value, dict):
                raise InvalidArgument(f"input '{vt.name}': expected a map (dict), got {type(value).__name__}")
            return dict(value)
        if vt.kind != "tensor":
            raise NotImplemented(f"input '{vt.name}': {vt.kind} inputs are not supported yet")
        if isinstance(value, OrtValue):
            value = value._value
        if isinstance(value, SparseTensor):
            value = value._dense()  # a sparse value fed to a dense input: its dense form
        if providers.owner_of(value) is not None:
            arr = value  # stays on its device; dtype and shape are checked like an array's
            if vt.elem_type and arr.dtype != np.dtype(helper.tensor_dtype_to_np_dtype(vt.elem_type)):
                raise InvalidArgument(f"input '{vt.name}': expected {_type_string(vt)}, got a device array of "
                                      f"{arr.dtype}. Unexpected input data type.")
        else:
            if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
                value = value.numpy()
            arr = _feeds.tensor(vt.name, vt.elem_type, _type_string(vt), value)
        if vt.shape is not None:
            _feeds.shape(vt.name, vt.shape, arr)
        return arr

    def run(self, output_names, input_feed, run_options: RunOptions | None = None) -> list:
        if (self._quick_runs and run_options is None and type(input_feed) is dict and terminate.current() is None
                and profile.active() is None and _idle() and _logging.debug_off(log)):
            # feeds of a signature run before: one QuickRun, no checks (they passed for these)
            for quick in self._quick_runs:
                results = quick.run(input_feed)
                if results is not None:
                    if not output_names:
                        return results
                    try:
                        return [results[self._output_index[n]] for n in output_names]
                    except (KeyError, TypeError):
                        break  # not an output: the full path says so
        return self._run(output_names, input_feed, run_options)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options: RunOptions | None = None) -> list:
        """run() on OrtValues (host arrays are taken too), giving OrtValues; an output made
        on a device stays there, as onnxruntime's do."""
        if not isinstance(input_dict_ort_values, dict):
            raise InvalidArgument("input_dict_ort_values must be a dict of name -> OrtValue, "
                                  f"got {type(input_dict_ort_values).__name__}")
        feeds = {k: v._value if isinstance(v, OrtValue) else v for k, v in input_dict_ort_values.items()}
        names = list(output_names) if output_names else self._output_names
        return [OrtValue(v) for v in self._run(names, feeds, run_options, set(names))]

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices=None) -> None:
        """run_with_ort_values with names and values in lists; `fetches` (a list) is filled
        with the output OrtValues, replacing what it held.  `fetch_devices` is not used:
        outputs stay where they are made."""
        if not isinstance(fetches, list):
            raise InvalidArgument(f"fetches must be a list to fill with OrtValues, got {type(fetches).__name__}")
        fetches[:] = self.run_with_ort_values(fetch_names, dict(zip(feed_names, feeds, strict=True)), run_options)

    def create_ortvalue_from_shape_and_type(self, shape, element_type, device_type: str = "cpu", device_id: int = 0,
                                            vendor_id: int = -1) -> OrtValue:
        return OrtValue.ortvalue_from_shape_and_type(shape, element_type, device_type, device_id)

    def _run(self, output_names, input_feed, run_options=None, keep_on_device=()) -> list:
        if run_options is not None and getattr(run_options, "_adapters", None):  # LoRA adapters' parameters fed
            from ._lora import with_adapters
            input_feed = with_adapters(self, input_feed, run_options._adapters)
        feeds = self._check_feeds(input_feed)
        if output_names:
            names = list(output_names)
            known = self._output_index
            for n in names:
                if n not in known:
                    raise _feeds.output_error(n, known)
        else:
            names = self._output_names
        if self._plain and run_options is None and _idle() and _logging.debug_off(log):
            # no log level, custom operators, memory limit or run options to put in force
            # (the common case: a run of a tiny model is a few microseconds)
            results = self._run_graph(feeds, keep_on_device)
            if self._profiler is None and not keep_on_device and self._quick_failures < _QUICK_TRIES:
                self._remember_quick_run(feeds)
            return [results[n] for n in names]
        tokens = self._enter(run_options)
        limit = memory.enter(self._memory_limit)  # this session's memory limit rules the run
        try:
            if log.isEnabledFor(logging.DEBUG):
                tag = run_options.run_tag if run_options is not None else ""
                log.debug("%srun%s: %d input(s), output(s) %s", _logging.tag(self._options.logid),
                          f" '{tag}'" if tag else "", len(feeds), ", ".join(names))
            results = self._run_with(feeds, run_options, keep_on_device)
        finally:
            memory.leave(limit)
            self._leave(tokens)
        return [results[n] for n in names]

    def _remember_quick_run(self, feeds) -> None:
        """Keep a QuickRun for these feeds' signature (most recent first, _QUICK_KEPT at
        most), where the graph runs as one native plan; after _QUICK_TRIES signatures
        that cannot, stop asking."""
        if terminate.current() is not None or profile.active() is not None:
            return
        if any(q.fits(feeds) for q in self._quick_runs):
            return  # (fed another way: a list, a strided array)
        quick = self._runnable.quick_run(feeds, self._output_names)
        if quick is None:
            self._quick_failures += 1
        else:
            self._quick_runs = (quick,) + self._quick_runs[:_QUICK_KEPT - 1]

    def _run_with(self, feeds, run_options, keep_on_device) -> dict:
        if run_options is None:
            results = self._run_graph(feeds, keep_on_device)
        else:
            if run_options.terminate:
                raise MlrtError("run() was terminated by RunOptions.terminate")
            flag = terminate.new_flag()  # this run's own: terminate set from another thread writes it
            run_options._watch(flag)
            try:
                with terminate.watching(flag):
                    results = self._run_graph(feeds, keep_on_device)
            finally:
                run_options._unwatch(flag)
        return results

    def _run_graph(self, feeds, keep_on_device) -> dict:
        profiler = self._profiler
        if profiler is None:
            return self._runnable.run(feeds, keep_on_device)
        with profile.profiling(profiler):
            start = time.monotonic_ns()
            results = self._runnable.run(feeds, keep_on_device)
            profiler.event("Session", "model_run", start, time.monotonic_ns())
        return results

    def io_binding(self) -> IOBinding:
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options: RunOptions | None = None) -> None:
        """Run on the bound inputs; outputs stay where they were bound (get_outputs())."""
        iobinding._run(lambda names, feeds, on_device: self._run(names, feeds, run_options, on_device))

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None) -> None:
        """Run on another thread and call `callback(results, user_data, err)` from it:
        results the list of output arrays and err "" on success; [] and the error's
        message on failure (as onnxruntime's).  Returns at once.  Input names and a
        missing input are checked here (InvalidArgument); everything else is reported
        to the callback."""
        if not callable(callback):
            raise InvalidArgument(f"run_async: callback must be callable, got {type(callback).__name__}")
        if not isinstance(input_feed, dict):
            raise InvalidArgument(f"input_feed must be a dict of name -> array, got {type(input_feed).__name__}")
        known = {a.name for a in self._inputs} | {a.name for a in self._overridable}
        unknown = [n for n in input_feed if n not in known]
        missing = [a for a in self._inputs if a.name not in input_feed]
        if unknown or missing:
            from ._feeds import names_error
            raise names_error(self._inputs, input_feed, missing, unknown)
        names = list(output_names) if output_names else [o.name for o in self._outputs]

        def work():
            try:
                results = self._run(names, input_feed, run_options)
            except Exception as exc:  # noqa: BLE001 - handed to the callback, as onnxruntime does
                callback([], user_data, str(exc) or type(exc).__name__)
                return
            callback(results, user_data, "")

        threading.Thread(target=work, name="mlrt-run-async", daemon=True).start()

_STRING = 8  # onnx.TensorProto.STRING
_QUICK_KEPT = 4  # signatures with a QuickRun per session
_QUICK_TRIES = 8  # signatures that run another way before a session stops asking


def _idle() -> bool:
    """Whether no session or run in this thread has a log level, custom operators or a
    memory limit in force (a run from inside a custom operator, say)."""
    return _logging.idle() and ops.custom_idle() and memory.idle()


def _all_str(a: np.ndarray) -> bool:
    """Whether an object array holds str elements only (which _feeds.strings leaves as they are)."""
    if a.size == 1:
        return type(a.item()) is str
    return all(type(s) is str for s in a.flat)


def _quick_check(vt: ValueType, required: bool) -> tuple:
    """(dtype, dims, 1 if a graph input else 0, rank, getter of the fixed dims or None,
    their sizes, whether it holds strings) a fed array is checked against on the quick
    path of _check_feeds; a dim of None takes any size (as _check_value: free, symbolic
    or non-positive)."""
    dims = tuple(d if isinstance(d, int) and d > 0 else None for d in vt.shape)
    fixed = [(i, d) for i, d in enumerate(dims) if d is not None]
    getter = operator.itemgetter(*(i for i, _ in fixed)) if fixed else None
    sizes = tuple(d for _, d in fixed) if len(fixed) > 1 else fixed[0][1] if fixed else None
    from onnx import helper
    return (np.dtype(helper.tensor_dtype_to_np_dtype(vt.elem_type)), dims, int(required), len(dims), getter, sizes,
            vt.elem_type == _STRING)
