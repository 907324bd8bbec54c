"""SequenceMap: run the body graph once per position of the input sequence.

Inputs (sequence, additional...): the body's i-th run gets the sequence's i-th
tensor and, for each additional input, its i-th tensor if it is a sequence (of the
same length) or the tensor itself.  Each body output becomes a sequence of the
per-position results.  The body's numeric ops run on the C kernels through
`runtime.run_subgraph`.
"""

from ._base import REQUIRED
from ._host import _HostOp


class SequenceMap(_HostOp):
    attributes = {"body": REQUIRED}
    tolerance = (1e-5, 1e-6)

    def run_host(self, values, runtime):
        body = self.a.body
        seq = self.sequence(values, 0, "input_sequence")
        extra = list(values[1:])
        if len(body.input) != 1 + len(extra):
            raise self.fail(f"the body has {len(body.input)} input(s), the node gives {1 + len(extra)}")
        if len(self.node.output) != len(body.output):
            raise self.fail(f"the node has {len(self.node.output)} output(s), the body {len(body.output)}")
        for k, e in enumerate(extra):
            if e is None:
                raise self.bad(f"additional input {k} is missing")
            if isinstance(e, list) and len(e) != len(seq):
                raise self.bad(f"additional sequence {k} has {len(e)} tensors, the input sequence {len(seq)}")
        results = [[] for _ in body.output]
        for i, item in enumerate(seq):
            feeds = [item] + [e[i] if isinstance(e, list) else e for e in extra]
            for r, out in zip(results, runtime.run_subgraph(body, feeds)):
                r.append(out)
        return results
