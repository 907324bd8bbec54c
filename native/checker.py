"""onnx's checker and shape inference, run isolated from this process.

`check_isolated(model)` answers (the checker's error or None, the value infos shape
inference found); `check_and_infer` is the same work done in this process.

onnx's C++ checker and shape inference can abort the whole process on some
malformed models (failed assertions).  Run in a child, such a model costs only the
child -- the caller gets InvalidModel and the next model gets a new child.  Small
models go to one long-lived child over a pipe (each message a little-endian uint64
length, then that many bytes: a serialized ModelProto one way, a pickled answer the
other); a large one (where copying its bytes costs more than a fork) is checked in a
child forked for it alone.  Where there is no fork, the work runs in this process.
"""

from __future__ import annotations

import os
import pickle
import struct
import threading

import onnx

from .._errors import InvalidModel


def check_and_infer(model: onnx.ModelProto) -> tuple[str | None, list]:
    """Run onnx's checker and shape inference: (checker error or None, inferred value infos)."""
    checked = model

    def declared_fully(o) -> bool:
        kind = o.type.WhichOneof("value")
        return kind is not None and (kind != "tensor_type" or o.type.tensor_type.HasField("shape"))

    if not all(declared_fully(o) for o in model.graph.output):
        # onnxruntime accepts outputs declared without a type or shape; the checker may not
        checked = onnx.ModelProto()
        checked.CopyFrom(model)
        keep = [o for o in checked.graph.output if declared_fully(o)]
        del checked.graph.output[:]
        checked.graph.output.extend(keep)
    try:
        onnx.checker.check_model(checked)
    except Exception as exc:
        return f"the model fails the ONNX checker: {str(exc).strip().splitlines()[0]}", []
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        return None, list(inferred.graph.value_info) + list(inferred.graph.output)
    except Exception:
        return None, []  # shape inference is advisory; the planner computes exact shapes per run


def check_isolated(model: onnx.ModelProto) -> tuple[str | None, list]:
    """`check_and_infer` in a child process; InvalidModel if onnx crashes it."""
    if not hasattr(os, "fork"):
        return check_and_infer(model)
    return _checker.check(model)


def _encode(err, infos) -> bytes:
    return pickle.dumps((err, [vi.SerializeToString() for vi in infos]))


def _decode(data: bytes) -> tuple[str | None, list]:
    err, blobs = pickle.loads(data)
    infos = []
    for blob in blobs:
        vi = onnx.ValueInfoProto()
        vi.ParseFromString(blob)
        infos.append(vi)
    return err, infos


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
        while True:
            try:
                (n,) = struct.unpack("<Q", self._read(rx, 8))
                model = onnx.ModelProto()
                model.ParseFromString(self._read(rx, n))
            except EOFError:
                return
            payload = _encode(*check_and_infer(model))
            tx.write(struct.pack("<Q", len(payload)) + payload)
            tx.flush()

    def _start(self) -> None:
        to_child, from_parent = os.pipe()[::-1]
        from_child, to_parent = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(to_child), os.close(from_child)
                self._serve(os.fdopen(from_parent, "rb"), os.fdopen(to_parent, "wb"))
            finally:
                os._exit(0)
        os.close(from_parent), os.close(to_parent)
        self.pid, self.tx, self.rx = pid, os.fdopen(to_child, "wb"), os.fdopen(from_child, "rb")

    def _stop(self) -> str:
        for f in (self.tx, self.rx):
            try:
                f.close()
            except OSError:
                pass
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        return f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"

    def check(self, model: onnx.ModelProto) -> tuple[str | None, list]:
        data = model.SerializeToString()
        if len(data) > self.LARGE:
            return self._check_forked(model)
        with self.lock:
            if self.pid is None:
                self._start()
            try:
                self.tx.write(struct.pack("<Q", len(data)) + data)
                self.tx.flush()
                (n,) = struct.unpack("<Q", self._read(self.rx, 8))
                return _decode(self._read(self.rx, n))
            except (EOFError, OSError):
                how = self._stop()
        raise InvalidModel(f"onnx's checker or shape inference crashed on this model ({how}): it is "
                           "malformed in a way onnx itself does not report")

    @staticmethod
    def _check_forked(model: onnx.ModelProto) -> tuple[str | None, list]:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read_fd)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(_encode(*check_and_infer(model)))
            finally:
                os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) or not data:
            raise InvalidModel("onnx's checker or shape inference crashed on this model: it is malformed "
                               "in a way onnx itself does not report")
        return _decode(data)


_checker = _Checker()
