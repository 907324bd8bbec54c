"""LearningModelSession, its options and its results (Windows ML's
LearningModelSession, LearningModelSessionOptions, LearningModelEvaluationResult)."""

from __future__ import annotations

import collections
import collections.abc
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .. import lowlevel
from .._errors import InvalidArgument, MlrtError, NoSuchFeature
from ..media import VideoFrame, detensorize
from ._binding import Feature, LearningModelBinding
from ._device import LearningModelDevice
from ._model import LearningModel
from ._values import Tensor


class LearningModelSessionOptions:
    """batch_size_override: the size of free batch dimensions (those with the ONNX
    DATA_BATCH denotation, as Windows ML does; 0 leaves them free);
    named_dimension_overrides: {dim_param: size}; close_model_on_session_creation:
    free the LearningModel once the session exists; intra_op_num_threads: the
    session's CPU threads (None: one per core)."""

    def __init__(self, batch_size_override: int = 1, close_model_on_session_creation: bool = False,
                 named_dimension_overrides: dict | None = None, intra_op_num_threads: int | None = None):
        self.batch_size_override = batch_size_override
        self.close_model_on_session_creation = bool(close_model_on_session_creation)
        self.named_dimension_overrides = {}
        for name, size in (named_dimension_overrides or {}).items():
            self.override_named_dimension(name, size)
        self.intra_op_num_threads = intra_op_num_threads

    def override_named_dimension(self, name: str, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidArgument(f"override_named_dimension('{name}'): size must be an int >= 1, got {size!r}")
        self.named_dimension_overrides[str(name)] = size

    def _lowlevel(self) -> lowlevel.SessionOptions:
        so = lowlevel.SessionOptions()
        b = self.batch_size_override
        if isinstance(b, bool) or not isinstance(b, int) or b < 0:
            raise InvalidArgument(f"batch_size_override must be an int >= 0, got {b!r}")
        if b:
            so.add_free_dimension_override_by_denotation("DATA_BATCH", b)
        for name, size in self.named_dimension_overrides.items():
            so.add_free_dimension_override_by_name(name, size)
        if self.intra_op_num_threads is not None:
            so.intra_op_num_threads = self.intra_op_num_threads
        return so


class _Outputs(collections.abc.Mapping):
    """A result's outputs: a read-only mapping name -> value.  A name it does not hold
    raises NoSuchFeature (a KeyError too) naming those it holds; a name differing only
    in case finds its output, as bind names do."""

    def __init__(self, outputs: dict):
        self._values = outputs

    def __getitem__(self, name):
        try:
            return self._values[name]
        except (KeyError, TypeError):
            pass
        found = [k for k in self._values if isinstance(name, str) and k.lower() == name.lower()]
        if len(found) == 1:
            return self._values[found[0]]
        raise NoSuchFeature(f"the result has no output {name!r} (its outputs: "
                            f"{', '.join(map(repr, self._values)) or 'none'})")

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"outputs({', '.join(self._values)})"


class LearningModelEvaluationResult:
    """What evaluate() returns: `outputs` (a read-only mapping name -> value),
    `correlation_id`, `succeeded`, `error_status` (the error when it failed).  Reading
    `outputs` of a failed evaluation raises its error; so does raise_for_status()."""

    def __init__(self, outputs: dict | None, correlation_id: str, error: MlrtError | None = None):
        self._outputs = _Outputs(dict(outputs or {}))
        self.correlation_id = correlation_id
        self.error_status = error

    @property
    def succeeded(self) -> bool:
        return self.error_status is None

    @property
    def outputs(self):
        self.raise_for_status()
        return self._outputs

    def raise_for_status(self) -> None:
        if self.error_status is not None:
            raise self.error_status

    def __repr__(self) -> str:
        state = f"outputs {', '.join(self._outputs)}" if self.succeeded else f"failed: {self.error_status}"
        return f"LearningModelEvaluationResult({self.correlation_id!r}, {state})"


class LearningModelSession:
    """A model made ready to run on a device: LearningModelSession(model, device=None,
    options=None).  evaluate / evaluate_async / evaluate_features run it;
    evaluate_stream runs it over a video.  Safe to evaluate from many threads."""

    def __init__(self, model: LearningModel, device: LearningModelDevice | None = None,
                 options: LearningModelSessionOptions | None = None):
        if not isinstance(model, LearningModel):
            raise InvalidArgument(f"LearningModelSession: expected a LearningModel, got {type(model).__name__}")
        self.model = model
        self.device = device if device is not None else LearningModelDevice()
        self.options = options if options is not None else LearningModelSessionOptions()
        self._session = lowlevel.InferenceSession(model.source(), self.options._lowlevel(),
                                                  providers=self.device.providers)
        # the CPU provider's thread pool: frames are tensorized on the model's threads, so
        # two pools never wait on each other for the same cores
        self._pool = self._session.get_intra_op_thread_pool()
        # (NodeArg.shape is [] for an unknown shape, as onnxruntime's; its rank is None then)
        shapes = {a.name: None if a.rank is None else a.shape
                  for a in self._session.get_inputs() + self._session.get_outputs()}
        self._features: dict[str, Feature] = {}
        for descriptors, is_input in ((model.input_features, True), (model.output_features, False)):
            for d in descriptors:
                shape = shapes.get(d.name)
                shape = None if shape is None else tuple(s if isinstance(s, int) and s > 0 else None for s in shape)
                self._features[d.name.lower()] = Feature(d, shape, is_input, model.metadata)
        self._outputs = [d.name for d in model.output_features]
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        if self.options.close_model_on_session_creation:
            model.close()

    # -- features --------------------------------------------------------------------------------
    def _feature(self, name: str) -> Feature:
        self._check_open()
        f = self._features.get(str(name).lower())
        if f is None:
            names = ", ".join(f.name for f in self._features.values())
            raise InvalidArgument(f"'{name}' is not an input or output of the model (features: {names})")
        return f

    def _check_open(self) -> None:
        if self._session is None:
            raise InvalidArgument("the LearningModelSession is closed")

    # -- evaluation ------------------------------------------------------------------------------
    def evaluate(self, binding: LearningModelBinding, correlation_id: str = "") -> LearningModelEvaluationResult:
        """Run the model on what `binding` holds.  An error while running gives a result
        with succeeded False (its outputs raise the error); a binding that does not
        belong to this session raises at once."""
        if not isinstance(binding, LearningModelBinding) or binding.session is not self:
            raise InvalidArgument("evaluate: the binding was made for another session")
        try:
            return LearningModelEvaluationResult(self._run(binding), correlation_id)
        except MlrtError as exc:
            return LearningModelEvaluationResult(None, correlation_id, exc)

    def evaluate_async(self, binding: LearningModelBinding, correlation_id: str = "") -> Future:
        """evaluate() on a worker thread: a concurrent.futures.Future of its result."""
        with self._lock:
            self._check_open()
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="mlrt-evaluate")
            return self._executor.submit(self.evaluate, binding, correlation_id)

    def evaluate_features(self, features: dict, correlation_id: str = "") -> LearningModelEvaluationResult:
        """Bind every name -> value of `features` (frames, arrays, Tensor values) and evaluate."""
        if not isinstance(features, dict):
            raise InvalidArgument(f"evaluate_features: expected a dict of name -> value, got {type(features).__name__}")
        binding = LearningModelBinding(self)
        for name, value in features.items():
            binding.bind(name, value)
        return self.evaluate(binding, correlation_id)

    def evaluate_stream(self, source, feature_name: str, *, depth: int = 3, **properties):
        """Evaluate every frame of `source` (a VideoSource, or any iterable of frames)
        bound to input `feature_name` (with bind `properties`: bitmap_bounds,
        pixel_range, mean, ...).  Decoding runs on its own thread and up to `depth`
        frames are tensorized and evaluated at once; yields (frame, result) in the
        source's order."""
        self._feature(feature_name)
        if not isinstance(depth, int) or depth < 1:
            raise InvalidArgument(f"evaluate_stream: depth must be an int >= 1, got {depth!r}")
        frames: queue.Queue = queue.Queue(maxsize=depth)
        stop = threading.Event()
        done = object()

        def offer(item) -> bool:  # False once the consumer has gone
            while not stop.is_set():
                try:
                    frames.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def decode():
            try:
                for frame in source:
                    if not offer(frame):
                        return
                offer(done)
            except BaseException as exc:  # handed to the consumer
                offer(exc)

        def one(frame):
            binding = LearningModelBinding(self)
            binding.bind(feature_name, frame if isinstance(frame, VideoFrame) else VideoFrame.from_numpy(frame),
                         **properties)
            return self.evaluate(binding, correlation_id=str(getattr(frame, "timestamp", "") or ""))

        reader = threading.Thread(target=decode, name="mlrt-decode", daemon=True)
        reader.start()
        pending: collections.deque = collections.deque()
        with ThreadPoolExecutor(max_workers=depth, thread_name_prefix="mlrt-stream") as pool:
            try:
                while True:
                    item = frames.get()
                    if item is done:
                        break
                    if isinstance(item, BaseException):
                        raise item
                    pending.append((item, pool.submit(one, item)))
                    if len(pending) >= depth:
                        frame, future = pending.popleft()
                        yield frame, future.result()
                while pending:
                    frame, future = pending.popleft()
                    yield frame, future.result()
            finally:
                stop.set()
                for _, future in pending:
                    future.cancel()
                reader.join(timeout=5)

    def _run(self, binding: LearningModelBinding) -> dict:
        self._check_open()
        missing = [f.name for f in self._features.values()
                   if f.is_input and f.descriptor.is_required and f.name not in binding._feeds]
        if missing:
            raise InvalidArgument(f"evaluate: input{'s' if len(missing) > 1 else ''} {', '.join(missing)} not bound")
        io = self._session.io_binding()
        for name, value in binding._feeds.items():  # arrays, device tensors, lists and dicts as they are
            io.bind_ortvalue_input(name, value if isinstance(value, lowlevel.OrtValue) else lowlevel.OrtValue(value))
        for name in self._outputs:
            frames = binding._images.get(name, (None, []))[1]
            on_device = self.device.is_gpu and bool(frames) and all(f.device == self.device.memory for f in frames)
            io.bind_output(name, self.device.memory if on_device else "cpu")
        self._session.run_with_iobinding(io)
        outputs = {}
        for name, value in zip(self._outputs, io.get_outputs()):
            outputs[name] = self._deliver(binding, name, value)
        return outputs

    def _deliver(self, binding: LearningModelBinding, name: str, value: lowlevel.OrtValue):
        """The output as evaluate() returns it: written into what was bound, else new."""
        image = binding._images.get(name)
        tensor = value.native_value()
        if image is not None:
            target, frames = image
            n = tensor.shape[0] if len(tensor.shape) == 4 else 0
            if n != len(frames):
                raise InvalidArgument(f"output '{name}' holds {n} image(s) of shape {list(tensor.shape)}, "
                                      f"{len(frames)} frame(s) are bound to it")
            for i, frame in enumerate(frames):
                detensorize(tensor, i, target, frame, self._pool)
            return binding._bound[name]
        tensor = value.numpy()  # host results as they are, device ones read back
        bound = binding._bound.get(name)
        if bound is not None:
            target = bound.numpy() if isinstance(bound, Tensor) else bound
            if tuple(np.shape(tensor)) != target.shape:
                raise InvalidArgument(f"output '{name}' is {list(np.shape(tensor))}, the bound array is "
                                      f"{list(target.shape)}")
            target[...] = tensor
            return bound
        return tensor

    # -- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
            self._session = None

    def __enter__(self) -> "LearningModelSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LearningModelSession({self.model!r} on {self.device!r})"
