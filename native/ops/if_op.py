"""If: run the then_branch or the else_branch graph, by a one-element bool condition.

The branches read values of the enclosing graph directly; their outputs (tensors,
sequences or optionals, opset 13/16) become the node's outputs.  Where the condition
is known when the enclosing graph is planned (it follows from constants, shapes or
small integer inputs planned by content), the plan holds the chosen branch's nodes
and no If runs at all (plan/cpu.py); otherwise run_host picks the branch at run time
and runs it through `runtime.run_subgraph`, as a native plan of its own.
"""

from ._base import REQUIRED
from ._host import _HostOp


class If(_HostOp):
    attributes = {"then_branch": REQUIRED, "else_branch": REQUIRED}
    value_inputs = (0,)  # the condition: a plan that knows it holds the chosen branch (plan/cpu.py)
    tolerance = (1e-5, 1e-6)

    def run_host(self, values, runtime):
        cond = self.scalar_bool(self.arg(values, 0), "the condition")
        branch = self.a.then_branch if cond else self.a.else_branch
        if len(branch.output) != len(self.node.output):
            raise self.fail(f"the {'then' if cond else 'else'} branch has {len(branch.output)} output(s), "
                            f"the node {len(self.node.output)}")
        return runtime.run_subgraph(branch, [])
