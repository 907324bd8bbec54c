"""onnx's checker and shape inference, run isolated from this process.

`check_isolated(model, data)` answers (the checker's complaint that refuses the model
or None, the value infos shape inference found, a complaint it overlooks or None: the
checker is advice, see `check_and_infer`); `check_and_infer` is the same work done in
this process.
`data` is the model's serialized bytes where the caller has them (onnx's C++ side
takes bytes): a large model is then not serialized again.

onnx's C++ checker and shape inference can abort the whole process on some
malformed models (failed assertions).  Run in a child, such a model costs only the
child -- the caller gets InvalidModel and the next model gets a new child.  Small
models go to one long-lived child over a pipe (each message a little-endian uint64
length, then that many bytes: a serialized ModelProto one way, a pickled answer the
other); a large one (where copying its bytes costs more than a fork) is checked in a
child forked for it alone.  Where there is no fork, the work runs in this process.
"""

from __future__ import annotations

import atexit
import ctypes
import gc
import logging
import os
import pickle
import re
import select
import signal
import struct
import threading
import time
from typing import TYPE_CHECKING

from .._errors import InvalidModel

if TYPE_CHECKING:  # (imported where a model is checked: its callers have parsed it with onnx by then)
    import onnx

log = logging.getLogger("mlrt")


def check_and_infer(model: onnx.ModelProto, data: bytes | None = None) -> tuple[str | None, list, str | None]:
    """Run onnx's checker and shape inference: (the checker's complaint that refuses the
    model or None, inferred value infos, a complaint that does not or None).  `data`, if
    given, is `model` serialized (onnx takes bytes; a ModelProto it serializes).

    The checker is advice: where it complains of what onnxruntime overlooks or mends at
    load (see `_as_onnxruntime_takes_it`), the model is checked again as onnxruntime
    takes it, and only a complaint that remains refuses it."""
    import onnx
    data = data if data is not None else model.SerializeToString()
    advice = None
    try:
        onnx.checker.check_model(_as_checked(model) or data)
    except Exception as exc:
        try:
            taken = _as_onnxruntime_takes_it(model)
        except Exception:  # (too malformed to be taken any other way: the complaint stands)
            taken = None
        if taken is None:
            return _refusal(exc), [], None
        try:
            onnx.checker.check_model(_as_checked(taken) or taken.SerializeToString())
        except Exception as again:
            return _refusal(again), [], None
        advice = _complaint(exc)
        model, data = taken, taken.SerializeToString()  # (inferred as it runs: its nodes in order)
    if b"Einsum" in data and _malformed_einsum(model.graph):
        return None, [], advice  # onnx's Einsum inference loops forever on some (mlrt's Einsum refuses them)
    try:
        inferred = onnx.shape_inference.infer_shapes(_without_large_values(data), strict_mode=False)
        return None, list(inferred.graph.value_info) + list(inferred.graph.output), advice
    except Exception:
        return None, [], advice  # shape inference is advisory; the planner computes exact shapes per run


def _complaint(exc: Exception) -> str:
    """The checker's complaint on one line (its context -- the node's name and op type --
    comes on lines of its own)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def _refusal(exc: Exception) -> str:
    return f"the model fails the ONNX checker: {_complaint(exc)}"


def _as_checked(model: onnx.ModelProto) -> bytes | None:
    """The model the checker is given, serialized, where it differs from `model` (None
    where it does not).  onnxruntime accepts outputs declared without a type or shape,
    inputs and value infos of unknown rank (a tensor type without a shape), and
    initializers of an IR < 4 model that are not also declared as graph inputs (as that
    IR asks); the checker does not: it is given a copy without those outputs, the
    shapeless ones as scalars (it checks no shapes against operators; mlrt's own graph
    keeps the rank unknown), and those initializers declared as inputs of their type.
    These pass without a word: exporters write them all the time."""
    import onnx

    def declared_fully(o) -> bool:
        kind = o.type.WhichOneof("value")
        return kind is not None and (kind != "tensor_type" or o.type.tensor_type.HasField("shape"))

    def shapeless(v) -> bool:
        return v.type.WhichOneof("value") == "tensor_type" and not v.type.tensor_type.HasField("shape")

    g = model.graph
    undeclared = []
    if model.ir_version < 4:
        inputs = {vi.name for vi in g.input}
        undeclared = [t for t in g.initializer if t.name not in inputs]
    if all(declared_fully(o) for o in g.output) and not any(shapeless(v) for v in list(g.input) + list(g.value_info)) \
            and not undeclared:
        return None
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    keep = [o for o in copy.graph.output if declared_fully(o)]
    del copy.graph.output[:]
    copy.graph.output.extend(keep)
    for v in list(copy.graph.input) + list(copy.graph.value_info):
        if shapeless(v):
            v.type.tensor_type.shape.SetInParent()
    copy.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                            for t in undeclared)
    return copy.SerializeToString()


def _as_onnxruntime_takes_it(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """A copy of a model the checker refuses, with what onnxruntime overlooks or mends
    at load made right; None where there is nothing of that.  onnxruntime checks each
    node as onnx's checker does (attributes, input counts, opset, subgraphs whole), and
    the initializers that nodes read; it does not mind:

    * the main graph's nodes out of order: it sorts them (so does mlrt's graph);
    * no IR version (0), an empty graph name, duplicate keys in metadata_props (the
      last one holds, as in mlrt's get_modelmeta);
    * initializers with no name, or given twice with the same type and dims (the last
      one holds, as in mlrt's graph), or that nothing reads (it drops them unread);
    * model-local functions that no node calls.

    What the copy still fails is the checker's word, and it refuses the model (as
    onnxruntime refuses it, but in other words)."""
    import onnx

    from .graph import node_reads, subgraphs, toposort
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    g = copy.graph
    changed = False
    if not copy.ir_version:
        try:
            copy.ir_version = max(3, onnx.helper.find_min_ir_version_for(list(copy.opset_import), True))
        except Exception:  # (an opset onnx does not know: the checker says so)
            copy.ir_version = onnx.IR_VERSION
        changed = True
    if not g.name:
        g.name = "main"
        changed = True
    last = {p.key: p.value for p in copy.metadata_props}
    if len(last) < len(copy.metadata_props):
        del copy.metadata_props[:]
        onnx.helper.set_model_props(copy, last)
        changed = True

    known = {vi.name for vi in g.input} | {t.name for t in g.initializer}
    try:
        order = toposort(list(g.node), known)
    except InvalidModel:
        order = None  # (a cycle, a value made twice or read unmade: mlrt's graph names it)
    if order is not None and any(a is not b for a, b in zip(order, g.node)):
        order = [onnx.NodeProto.FromString(n.SerializeToString()) for n in order]  # (out of the list they leave)
        del g.node[:]
        g.node.extend(order)
        changed = True

    read = {n for node in g.node for n in node_reads(node)} | {o.name for o in g.output} | {vi.name for vi in g.input}
    by_name: dict = {}
    for t in g.initializer:
        by_name.setdefault(t.name, []).append(t)
    keep = []
    for name, tensors in by_name.items():
        if not name or name not in read:
            continue
        if len({(t.data_type, tuple(t.dims)) for t in tensors}) == 1:
            keep.append(tensors[-1])
        else:
            keep += tensors  # (onnxruntime refuses them too; mlrt's graph says how they differ)
    if len(keep) < len(g.initializer):
        kept = [onnx.TensorProto.FromString(t.SerializeToString()) for t in keep]
        del g.initializer[:]
        g.initializer.extend(kept)
        changed = True

    functions = {(f.domain, f.name, f.overload): f for f in copy.functions}
    if len(functions) == len(copy.functions):  # (a function given twice onnxruntime refuses, called or not)
        called, stack = {}, list(g.node)
        while stack:
            node = stack.pop()
            key = (node.domain, node.op_type, node.overload)
            if key in functions and key not in called:
                called[key] = functions[key]
                stack += functions[key].node
            for sub in subgraphs(node):
                stack += sub.node
        if len(called) < len(functions):
            kept = [onnx.FunctionProto.FromString(f.SerializeToString()) for f in called.values()]
            del copy.functions[:]
            copy.functions.extend(kept)
            changed = True
    return copy if changed else None


_EINSUM_EQUATION = re.compile(rb"[A-Za-z,.\->\s]*")


def _malformed_einsum(graph: onnx.GraphProto) -> bool:
    """Whether an Einsum here or in a subgraph has an equation of other characters than
    the spec's (letters, ',', '...', '->', spaces): onnx's shape inference of such an
    equation (the bytes b"\\x01>" one) never returns."""
    for node in graph.node:
        for a in node.attribute:
            if node.op_type == "Einsum" and a.name == "equation" and not _EINSUM_EQUATION.fullmatch(a.s):
                return True
            if any(_malformed_einsum(g) for g in list(a.graphs) + ([a.g] if a.HasField("g") else [])):
                return True
    return False


def _deadline(data: bytes) -> float:
    """Seconds onnx may take over one model before its check is abandoned: far more than
    any real model needs (about 1 s per 100 MB here), so only a hang in onnx reaches it."""
    return 20.0 + len(data) / (16 << 20)


def _answered(fd: int, seconds: float) -> bool:
    """Whether `fd` has something to read (or is closed) within `seconds`."""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return False
        try:
            if select.select([fd], [], [], left)[0]:
                return True
        except InterruptedError:
            continue


def _abandoned(pid: int) -> tuple[None, list, None]:
    """A check that ran past its deadline: the child is killed and the model goes on
    without the checker's advice and inferred shapes (mlrt's planner needs neither)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    log.warning("onnx's checker and shape inference did not finish on this model; it is loaded without them")
    return None, [], None


VALUES_KEPT = 1 << 20  # bytes: initializers above this go to shape inference without their values


def _without_large_values(data: bytes) -> bytes:
    """The model for shape inference: initializers over VALUES_KEPT keep their name,
    type and dims but not their values.  Inference reads the values only of inputs
    that hold shapes, axes, pads, scales or counts (a few elements each), and onnx's
    copies of a large model (parsed, serialized, parsed again) took longer than the
    inference itself."""
    if len(data) <= VALUES_KEPT:
        return data
    import onnx
    model = onnx.ModelProto()
    model.ParseFromString(data)  # (upb refers to `data` for the values: no copy)
    stripped = False
    for t in model.graph.initializer:
        if t.ByteSize() > VALUES_KEPT:
            for name in ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data",
                         "uint64_data"):
                t.ClearField(name)
            stripped = True
    return model.SerializeToString() if stripped else data


def check_isolated(model: onnx.ModelProto, data: bytes | None = None,
                   meanwhile=None) -> tuple[str | None, list, str | None]:
    """`check_and_infer` in a child process; InvalidModel if onnx crashes it.
    `meanwhile()`, if given, runs in this process while the child works (the caller's
    own reading of the model: the two take about as long, on two cores)."""
    if not hasattr(os, "fork"):
        answer = check_and_infer(model, data)
        if meanwhile is not None:
            meanwhile()
        return answer
    return _checker.check(model, data, meanwhile)


def _encode(err, infos, advice) -> bytes:
    return pickle.dumps((err, [vi.SerializeToString() for vi in infos], advice))


def _decode(data: bytes) -> tuple[str | None, list, str | None]:
    import onnx
    err, blobs, advice = pickle.loads(data)
    infos = []
    for blob in blobs:
        vi = onnx.ValueInfoProto()
        vi.ParseFromString(blob)
        infos.append(vi)
    return err, infos, advice


class _Checker:
    """The long-lived child and its pipes (started on first use, restarted after a crash)."""

    LARGE = 64 << 20

    def __init__(self):
        self.lock = threading.Lock()
        self.pid = None

    @staticmethod
    def _read(f, n: int) -> bytes:
        data = f.read(n)
        if data is None or len(data) < n:
            raise EOFError
        return data

    def _serve(self, rx, tx) -> None:
        import onnx
        _keep_freed_memory()
        while True:
            try:
                (n,) = struct.unpack("<Q", self._read(rx, 8))
                data = self._read(rx, n)
                model = onnx.ModelProto()
                model.ParseFromString(data)
            except EOFError:
                return
            payload = _encode(*check_and_infer(model, data))
            tx.write(struct.pack("<Q", len(payload)) + payload)
            tx.flush()

    def _start(self) -> None:
        to_child, from_parent = os.pipe()[::-1]
        from_child, to_parent = os.pipe()
        try:  # a model crosses in 1 MB steps, not 64 KB ones (a switch between the processes each)
            import fcntl
            fcntl.fcntl(to_child, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        except OSError:
            pass
        pid = os.fork()
        if pid == 0:
            try:
                _in_child()
                os.close(to_child), os.close(from_child)
                with os.fdopen(from_parent, "rb") as rx, os.fdopen(to_parent, "wb") as tx:
                    self._serve(rx, tx)
            finally:
                os._exit(0)
        os.close(from_parent), os.close(to_parent)
        self.pid, self.tx, self.rx = pid, os.fdopen(to_child, "wb"), os.fdopen(from_child, "rb")
        if not self._closes_at_exit:
            atexit.register(self._close_at_exit)  # (the child reads the end of its pipe and leaves)
            self._closes_at_exit = True

    _closes_at_exit = False

    def _close_at_exit(self) -> None:
        if self.pid is not None:
            for f in (self.tx, self.rx):
                try:
                    f.close()
                except OSError:
                    pass

    def _stop(self) -> str:
        for f in (self.tx, self.rx):
            try:
                f.close()
            except OSError:
                pass
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"

    def check(self, model: onnx.ModelProto, data: bytes | None = None,
              meanwhile=None) -> tuple[str | None, list, str | None]:
        data = data if data is not None else model.SerializeToString()
        if len(data) > self.LARGE:
            return self._check_forked(model, data, meanwhile)
        with self.lock:
            if self.pid is None:
                self._start()
            try:
                self.tx.write(struct.pack("<Q", len(data)))
                self.tx.write(data)  # (not joined to the header: that would copy a large model once more)
                self.tx.flush()
            except OSError:
                how = self._stop()
            else:
                _run(meanwhile, self._stop)  # (an answer left unread: the next model gets a new child)
                if not _answered(self.rx.fileno(), _deadline(data)):
                    answer = _abandoned(self.pid)
                    self._stop()
                    return answer
                try:
                    (n,) = struct.unpack("<Q", self._read(self.rx, 8))
                    return _decode(self._read(self.rx, n))
                except (EOFError, OSError):
                    how = self._stop()
        raise InvalidModel(f"onnx's checker or shape inference crashed on this model ({how}): it is "
                           "malformed in a way onnx itself does not report")

    @staticmethod
    def _check_forked(model: onnx.ModelProto, data: bytes, meanwhile=None) -> tuple[str | None, list, str | None]:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                _in_child()
                os.close(read_fd)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(_encode(*check_and_infer(model, data)))
            finally:
                os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            _run(meanwhile, lambda: (pipe.close(), os.kill(pid, signal.SIGKILL), os.waitpid(pid, 0)))
            if not _answered(read_fd, _deadline(data)):
                answer = _abandoned(pid)
                os.waitpid(pid, 0)
                return answer
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) or not data:
            raise InvalidModel("onnx's checker or shape inference crashed on this model: it is malformed "
                               "in a way onnx itself does not report")
        return _decode(data)


def _in_child() -> None:
    """First thing in a checker child.  The objects it shares with the parent are never
    finalized here (gc.freeze): a session's native pool, say, belongs to the parent's
    threads.  And a signal that kills it is the default one, not a handler the parent
    set (a fuzzer's, a crash reporter's): the parent reports the death."""
    gc.freeze()
    for name in ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT"):
        try:
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        except (AttributeError, ValueError, OSError):
            pass


def _keep_freed_memory() -> None:
    """In the long-lived child: keep up to 128 MB that one model's check freed for the
    next, not given back to the system and faulted in again (that took 2-4x the time of
    the check itself).  glibc's mallopt; elsewhere nothing changes."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD
        libc.mallopt(-4, 0)          # M_MMAP_MAX: large blocks from the heap too, so they are kept
    except (OSError, AttributeError):
        pass


def _run(meanwhile, abandon) -> None:
    """Call meanwhile() (if any); should it raise, abandon() the child's answer first."""
    if meanwhile is None:
        return
    try:
        meanwhile()
    except BaseException:
        abandon()
        raise


_checker = _Checker()
