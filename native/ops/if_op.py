"""If: run the then_branch or the else_branch graph, by a one-element bool condition.

The branches read values of the enclosing graph directly; their outputs (tensors,
sequences or optionals, opset 13/16) become the node's outputs.  Their numeric ops
run on the C kernels through `runtime.run_subgraph`.
"""

from ._base import REQUIRED
from ._host import _HostOp


class If(_HostOp):
    attributes = {"then_branch": REQUIRED, "else_branch": REQUIRED}
    tolerance = (1e-5, 1e-6)

    def run_host(self, values, runtime):
        cond = self.scalar_bool(self.arg(values, 0), "the condition")
        branch = self.a.then_branch if cond else self.a.else_branch
        if len(branch.output) != len(self.node.output):
            raise self.fail(f"the {'then' if cond else 'else'} branch has {len(branch.output)} output(s), "
                            f"the node {len(self.node.output)}")
        return runtime.run_subgraph(branch, [])
