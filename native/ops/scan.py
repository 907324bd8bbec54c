"""Scan: run the body graph over slices of the scan inputs, carrying state.

Scan-8 (batched): inputs (sequence_lens?, states..., scans...), every tensor with
batch axis 0 and the scan axis 1; `directions` reverses a scan input; each batch
entry runs its own sequence_lens[b] steps, and scan outputs are zero-padded to the
maximum length.
Scan-9+: inputs (states..., scans...); `scan_input_axes` / `scan_input_directions`
pick the axis and direction of each scan input, `scan_output_axes` /
`scan_output_directions` where each scan output accumulates (direction 1 prepends).
The body takes (states..., slices...) and returns (states..., scan elements...);
its numeric ops run on the C kernels through `runtime.run_subgraph`; Scan-9+ bodies
whose plan is native iterate in C (`runtime.run_scan`, native/plan/loop.py).
"""

import numpy as np

from ._base import REQUIRED, normalize_axis
from ._host import _HostOp, declared, empty_like_declared, stack


class _Scan(_HostOp):
    tolerance = (1e-5, 1e-6)

    def _split(self, values):
        """(states, scan inputs) after checking counts against the body."""
        body, m = self.a.body, self.a.num_scan_inputs
        if m <= 0 or m > len(values):
            raise self.fail(f"num_scan_inputs={m} but the node has {len(values)} state/scan input(s)")
        n = len(values) - m
        if len(body.input) != n + m:
            raise self.fail(f"the body has {len(body.input)} input(s), the node gives {n} state(s) "
                            f"and {m} scan input(s)")
        if len(body.output) < n:
            raise self.fail(f"the body has {len(body.output)} output(s), fewer than the {n} state(s)")
        if len(self.node.output) > len(body.output):
            raise self.fail(f"the node has {len(self.node.output)} outputs, the body gives {len(body.output)}")
        states = [self.tensor(values, i, f"initial state {i}") for i in range(n)]
        scans = [self.tensor(values, n + j, f"scan input {j}") for j in range(m)]
        return states, scans

    def _per_item(self, attr, count, default, what):
        given = list(attr or [])
        if given and len(given) != count:
            raise self.fail(f"{what} has {len(given)} entries for {count} value(s)")
        return given or [default] * count


class Scan_8(_Scan):
    attributes = {"body": REQUIRED, "num_scan_inputs": REQUIRED, "directions": None}

    def run_host(self, values, runtime):
        lens_in = values[0] if values else None
        states, scans = self._split(list(values[1:]))
        dirs = self._per_item(self.a.directions, len(scans), 0, "directions")
        for j, x in enumerate(scans):
            if x.ndim < 2:
                raise self.bad(f"scan input {j} has shape {list(x.shape)}; Scan-8 needs [batch, sequence, ...]")
        batch, max_len = scans[0].shape[:2]
        for j, x in enumerate(scans):
            if x.shape[:2] != (batch, max_len):
                raise self.bad(f"scan input {j} has shape {list(x.shape)}, scan input 0 {list(scans[0].shape)}; "
                               "batch and sequence sizes must agree")
        for i, s in enumerate(states):
            if s.ndim < 1 or s.shape[0] != batch:
                raise self.bad(f"initial state {i} has shape {list(s.shape)}; its axis 0 must be the batch ({batch})")
        if lens_in is None:
            lens = [max_len] * batch
        else:
            lens = [int(v) for v in np.asarray(lens_in).reshape(-1)]
            if len(lens) != batch or any(not 0 <= v <= max_len for v in lens):
                raise self.bad(f"sequence_lens {lens} must give one length in 0..{max_len} per batch entry ({batch})")
        body = self.a.body
        n_state, n_scan = len(states), len(body.output) - len(states)
        finals = [[] for _ in range(n_state)]
        outs_per_batch = [[] for _ in range(n_scan)]
        for b in range(batch):
            st = [s[b] for s in states]
            steps = [[] for _ in range(n_scan)]
            for t in range(lens[b]):
                slices = [np.ascontiguousarray(x[b, t if d == 0 else lens[b] - 1 - t]) for x, d in zip(scans, dirs)]
                outs = runtime.run_subgraph(body, st + slices)
                st = list(outs[:n_state])
                for k in range(n_scan):
                    steps[k].append(outs[n_state + k])
            for i in range(n_state):
                finals[i].append(st[i])
            for k in range(n_scan):
                outs_per_batch[k].append(steps[k])
        results = [stack(self, f, f"state {i}") if batch else states[i].copy() for i, f in enumerate(finals)]
        for k in range(n_scan):
            results.append(self._pad(outs_per_batch[k], batch, max_len, body.output[n_state + k], k))
        return results

    def _pad(self, per_batch, batch, max_len, vi, k):
        """[batch, max_len, ...] from each batch entry's steps, zero past its length."""
        sample = next((s[0] for s in per_batch if s), None)
        if sample is None:  # no step ran at all: the body's declared type says what is empty
            dtype, dims = declared(vi)
            if dims is None:
                if batch and max_len:
                    raise self.bad(f"scan output {k}: no step ran and the body does not declare its shape")
                dims = ()
            return np.zeros((batch, max_len) + tuple(dims), dtype=dtype or np.float32)
        out = np.zeros((batch, max_len) + sample.shape, dtype=sample.dtype)
        for b, steps in enumerate(per_batch):
            if steps:
                block = stack(self, steps, f"scan output {k}")
                if block.shape[1:] != sample.shape or block.dtype != sample.dtype:
                    raise self.bad(f"scan output {k} changes shape or type between batch entries")
                out[b, :len(steps)] = block
        return out


class Scan_9(_Scan):
    attributes = {"body": REQUIRED, "num_scan_inputs": REQUIRED, "scan_input_axes": None,
                  "scan_input_directions": None, "scan_output_axes": None, "scan_output_directions": None}

    def run_host(self, values, runtime):
        states, scans = self._split(list(values))
        body = self.a.body
        n_state, n_scan = len(states), len(body.output) - len(states)
        in_axes = self._per_item(self.a.scan_input_axes, len(scans), 0, "scan_input_axes")
        in_dirs = self._per_item(self.a.scan_input_directions, len(scans), 0, "scan_input_directions")
        out_axes = self._per_item(self.a.scan_output_axes, n_scan, 0, "scan_output_axes")
        out_dirs = self._per_item(self.a.scan_output_directions, n_scan, 0, "scan_output_directions")
        for j, x in enumerate(scans):
            if x.ndim == 0:
                raise self.bad(f"scan input {j} is a scalar: it has no axis to scan")
        in_axes = [normalize_axis(a, x.ndim, self.where) for a, x in zip(in_axes, scans)]
        length = scans[0].shape[in_axes[0]]
        for j, (x, ax) in enumerate(zip(scans, in_axes)):
            if x.shape[ax] != length:
                raise self.bad(f"scan input {j} has {x.shape[ax]} steps on axis {ax}, scan input 0 has {length}")
        st = list(states)
        steps = [[] for _ in range(n_scan)]
        if length:  # iterated in C when the body's plan is native (runtime.run_scan None: in Python)
            ordered = [np.moveaxis(x, ax, 0)[::-1] if d else np.moveaxis(x, ax, 0)
                       for x, ax, d in zip(scans, in_axes, in_dirs)]
            native = runtime.run_scan(body, st, ordered, length)
            if native is not None:
                st, stacked = native
                for k in range(n_scan):
                    block = stacked[k][::-1] if out_dirs[k] == 1 else stacked[k]
                    axis = normalize_axis(out_axes[k], block.ndim, self.where)
                    st.append(np.ascontiguousarray(np.moveaxis(block, 0, axis)))
                return st
        for t in range(length):
            slices = [np.take(x, t if d == 0 else length - 1 - t, axis=ax) for x, ax, d in zip(scans, in_axes, in_dirs)]
            outs = runtime.run_subgraph(body, st + slices)
            st = list(outs[:n_state])
            for k in range(n_scan):
                steps[k].append(outs[n_state + k])
        results = st
        for k in range(n_scan):
            vi = body.output[n_state + k]
            if not steps[k]:
                results.append(empty_like_declared(vi, (), out_axes[k]))
                continue
            items = steps[k][::-1] if out_dirs[k] == 1 else steps[k]
            axis = normalize_axis(out_axes[k], items[0].ndim + 1, self.where)
            results.append(stack(self, items, f"scan output {k}", axis))
        return results
