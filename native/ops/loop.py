"""Loop: run the body graph while the trip count M lasts and the condition holds.

Inputs (M, cond, v_initial...) — M and cond may be absent ("").  The body takes
(iteration_num int64, cond bool, v...) and returns (cond, v..., scan...); the node
returns the final loop-carried values (tensors, sequences or optionals) and each
scan output stacked over the iterations along a new axis 0.  With zero iterations
the loop-carried outputs are the initial values and the scan outputs are empty
(their declared element type and dims in the body, with 0 in front).
The body's numeric ops run on the C kernels through `runtime.run_subgraph`; a body
whose plan is native iterates in C (`runtime.run_loop`, native/plan/loop.py).
"""

import numpy as np

from ._base import REQUIRED
from ._host import _HostOp, empty_like_declared, stack


class Loop(_HostOp):
    attributes = {"body": REQUIRED}
    tolerance = (1e-5, 1e-6)

    def run_host(self, values, runtime):
        body = self.a.body
        state = list(values[2:])
        n_state = len(state)
        n_scan = len(body.output) - 1 - n_state
        if len(body.input) != 2 + n_state or n_scan < 0:
            raise self.fail(f"the body has {len(body.input)} input(s) and {len(body.output)} output(s); with "
                            f"{n_state} loop-carried value(s) it needs {2 + n_state} inputs and at least "
                            f"{1 + n_state} outputs")
        if len(self.node.output) > n_state + n_scan:
            raise self.fail(f"the node has {len(self.node.output)} outputs, the body gives {n_state + n_scan}")
        m = self.arg(values, 0)
        trip = None if m is None else self.scalar_int(m, "the trip count M")
        cond_in = self.arg(values, 1)
        going = True if cond_in is None else self.scalar_bool(cond_in, "the condition")
        scans = [[] for _ in range(n_scan)]
        i = 0
        native = runtime.run_loop(body, state, 0, trip) if going else None
        if native is not None:  # iterated in C to the end; scan outputs come in chunks of iterations
            state, chunks, i, going = native
            return list(state) + [np.concatenate(c) for c in chunks]
        while going and (trip is None or i < trip):
            outs = runtime.run_subgraph(body, [np.array(i, np.int64), np.array(going), *state])
            going = self.scalar_bool(outs[0], "the body's condition output")
            state = list(outs[1:1 + n_state])
            for k in range(n_scan):
                scans[k].append(outs[1 + n_state + k])
            i += 1
        results = state
        for k in range(n_scan):
            vi = body.output[1 + n_state + k]
            results.append(stack(self, scans[k], f"scan output {k}") if scans[k] else empty_like_declared(vi, ()))
        return results
