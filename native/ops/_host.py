"""What host operators share: the base classes and the checks on their values.

Host operators run in Python (`run_host`), node by node: control flow (If, Loop,
Scan, SequenceMap run their bodies through `runtime.run_subgraph`, so the body's
numeric ops still run on the C kernels), sequence and optional values, strings, and
for now the ops whose output shape depends on the data (NonZero, Unique, Compress).

Values, as a CPU partition hands them over: a tensor is a numpy array (strings are
object arrays of `str`), a sequence is a Python list of arrays, an absent optional
(or an absent optional input) is None.  Bad data raises InvalidArgument naming the
node; a malformed node or body raises InvalidModel.
"""

from __future__ import annotations

import numpy as np

from ..._errors import InvalidArgument
from ._base import Info, Op


class _HostOp(Op):
    """An operator run by `run_host` in Python; it has no C kernel and no planning step."""

    host = True
    kernel = None
    tolerance = (0.0, 0.0)  # host ops move data; results are exact

    def infer(self, inputs):
        raise self.fail("runs on the host, node by node; its outputs are known only when it runs")

    # -- checks on values ------------------------------------------------------------
    def bad(self, message: str) -> InvalidArgument:
        return InvalidArgument(f"{self.where}: {message}")

    def arg(self, values: list, index: int):
        """Input `index`, or None if it is absent (omitted at the end, or given as "")."""
        return values[index] if index < len(values) else None

    def tensor(self, values: list, index: int, what: str = "") -> np.ndarray:
        v = self.arg(values, index)
        if not isinstance(v, np.ndarray):
            got = "nothing" if v is None else "a sequence" if isinstance(v, list) else type(v).__name__
            raise self.bad(f"input {index}{' (' + what + ')' if what else ''} must be a tensor, got {got}")
        return v

    def sequence(self, values: list, index: int, what: str = "") -> list:
        v = self.arg(values, index)
        if not isinstance(v, list):
            got = "nothing" if v is None else "a tensor" if isinstance(v, np.ndarray) else type(v).__name__
            raise self.bad(f"input {index}{' (' + what + ')' if what else ''} must be a sequence, got {got}")
        return v

    def scalar_int(self, value: np.ndarray, what: str) -> int:
        a = np.asarray(value)
        if a.size != 1 or a.dtype.kind not in "iu":
            raise self.bad(f"{what} must be a single integer, got a {a.dtype.name} tensor of shape {list(a.shape)}")
        return int(a.reshape(-1)[0])

    def scalar_bool(self, value, what: str) -> bool:
        if not isinstance(value, np.ndarray) or value.size != 1:
            shape = list(value.shape) if isinstance(value, np.ndarray) else type(value).__name__
            raise self.bad(f"{what} must be a tensor of one element, got {shape}")
        return bool(value.reshape(-1)[0])

    def position(self, value, length: int, what: str, inclusive_end: bool = False) -> int:
        """A sequence position in [-n, n-1] ([-n, n] if inclusive_end), made non-negative."""
        pos = self.scalar_int(value, what)
        hi = length if inclusive_end else length - 1
        if not -length <= pos <= hi:
            raise self.bad(f"{what} {pos} is out of range for a sequence of {length} tensor(s) "
                           f"(accepted: {-length}..{hi})")
        return pos + length if pos < 0 else pos

    def same_dtype(self, arrays, what: str) -> None:
        kinds = {a.dtype for a in arrays}
        if len(kinds) > 1:
            raise self.bad(f"{what} must all have one element type, got {', '.join(sorted(str(k) for k in kinds))}")


class _HostTensorOp(_HostOp):
    """A host op from tensors to tensors (no subgraph, no sequences): when all its inputs
    are known while planning (constant folding), infer() computes the outputs, so a
    graph whose data-dependent shapes come from constants can still be folded."""

    def infer(self, inputs):
        present = [i for i in inputs if i is not None]
        if any(i.value is None for i in present):
            return super().infer(inputs)
        outs = self.run_host([i.value if i is not None else None for i in inputs], None)
        if any(isinstance(o, np.ndarray) and o.dtype == object for o in outs):
            return super().infer(inputs)  # string results stay on the host
        return [Info.of(o) for o in outs]


def strings(x: np.ndarray) -> np.ndarray:
    """An object array of Python str (bytes decoded as UTF-8) of x's shape."""
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, s in enumerate(x.reshape(-1)):
        flat[i] = s.decode("utf-8", "replace") if isinstance(s, bytes) else str(s)
    return out


def declared(vi) -> tuple[np.dtype | None, tuple | None]:
    """Element type and static dims of a body output's declared type (None where unknown)."""
    from onnx import helper
    t = vi.type
    if t.WhichOneof("value") != "tensor_type":
        return None, None
    tt = t.tensor_type
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)) if tt.elem_type else None
    dims = None
    if tt.HasField("shape"):
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
        if any(d is None for d in dims):
            dims = None
    return dtype, dims


def empty_like_declared(vi, lead: tuple, axis: int = 0) -> np.ndarray:
    """An empty scan output for zero iterations: the body output's declared element type
    and dims with the zero-length scan axis inserted at `axis` (float32 / 1-D if unknown)."""
    dtype, dims = declared(vi)
    dims = list(dims) if dims is not None else []
    axis = axis + len(dims) + 1 if axis < 0 else axis
    dims.insert(min(max(axis, 0), len(dims)), 0)
    return np.zeros(tuple(lead) + tuple(dims), dtype=dtype or np.float32)


def stack(op: _HostOp, items: list, what: str, axis: int = 0) -> np.ndarray:
    """Per-iteration tensors joined along a new axis; every item must share shape and type."""
    first = items[0]
    for k, it in enumerate(items):
        if not isinstance(it, np.ndarray):
            raise op.bad(f"{what}: iteration {k} produced a {type(it).__name__}, not a tensor")
        if it.shape != first.shape or it.dtype != first.dtype:
            raise op.bad(f"{what}: iteration {k} produced a {it.dtype.name} tensor of shape {list(it.shape)}, "
                         f"iteration 0 a {first.dtype.name} tensor of shape {list(first.shape)}; "
                         "scan outputs must keep one shape")
    return np.stack(items, axis=axis)
