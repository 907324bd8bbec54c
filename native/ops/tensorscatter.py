"""TensorScatter: present_cache = past_cache with update's rows along the sequence
axis (`axis`, default -2, never 0) written from each batch's write index on
(write_indices, default 0); mode "circular" wraps around max_sequence_length,
"linear" requires the rows to fit.  A KV-cache update."""

import numpy as np

from ..._errors import InvalidArgument
from ._base import Info, Op, normalize_axis
from ._reduce import prod


class TensorScatter(Op):
    attributes = {"axis": -2, "mode": "linear"}
    params = "mlrt_tensor_scatter_params"
    tolerance = (0.0, 0.0)

    def resolve(self, shapes):
        past, upd = shapes[0], shapes[1]
        if self.a.mode not in ("linear", "circular"):
            raise self.fail(f"mode must be 'linear' or 'circular', got {self.a.mode!r}")
        if len(past) < 2:
            raise self.fail(f"past_cache must have rank >= 2, got shape {list(past)}")
        axis = normalize_axis(int(self.a.axis), len(past), self.where)
        if axis == 0:
            raise self.fail("axis cannot be 0 (the batch dimension)")
        if len(upd) != len(past) or any(a != b for d, (a, b) in enumerate(zip(past, upd)) if d != axis) \
                or upd[axis] > past[axis]:
            raise self.fail(f"update {list(upd)} does not fit past_cache {list(past)} along axis {axis}")
        if len(shapes) > 2 and shapes[2] is not None and tuple(shapes[2]) != (past[0],):
            raise self.fail(f"write_indices must have shape [{past[0]}], got {list(shapes[2])}")
        return axis

    def infer(self, inputs):
        past, upd = self.need(inputs, 0), self.need(inputs, 1)
        wi = inputs[2] if len(inputs) > 2 else None
        if upd.dtype != past.dtype or (wi is not None and wi.dtype != np.int64):
            raise self.fail("update must have past_cache's type and write_indices must be int64")
        self.resolve([past.shape, upd.shape, wi.shape if wi is not None else None])
        return [Info(past.dtype, past.shape)]

    def pack(self, inputs, outputs):
        past, upd = inputs[0], inputs[1]
        axis = self.resolve([past.shape, upd.shape])
        return {"batch": past.shape[0], "outer": prod(past.shape[:axis]), "max_len": past.shape[axis],
                "seq_len": upd.shape[axis], "inner": prod(past.shape[axis + 1:]),
                "circular": int(self.a.mode == "circular")}

    def run_host(self, values, runtime):
        """String caches (the C kernel takes fixed-size elements): the same update in numpy."""
        past, upd = values[0], values[1]
        wi = values[2] if len(values) > 2 else None
        if past.dtype != upd.dtype:  # (types not known when the graph was planned)
            raise InvalidArgument(f"{self.where}: update ({upd.dtype}) must have past_cache's type ({past.dtype})")
        axis = self.resolve([past.shape, upd.shape, wi.shape if wi is not None else None])
        out = past.copy()
        n, m = past.shape[axis], upd.shape[axis]
        for b in range(past.shape[0]):
            start = int(wi[b]) if wi is not None else 0
            rows = np.arange(start, start + m)
            if self.a.mode == "circular":
                rows %= n
            elif m and (start < 0 or start + m > n):
                raise InvalidArgument(f"{self.where}: write index {start} of batch {b} puts rows past the cache")
            for s, row in enumerate(rows):
                dst, src = [slice(None)] * past.ndim, [slice(None)] * past.ndim
                dst[0], dst[axis], src[0], src[axis] = b, int(row), b, s
                out[tuple(dst)] = upd[tuple(src)]
        return [out]
