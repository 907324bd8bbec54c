"""Constant folding: a node whose inputs are all constant initializers (not
overridable graph inputs) is run once, now, on the C kernels, and its outputs
become initializers."""


import numpy as np

from ..._errors import MlrtError
from ..ops import make_op
from ..plan.eager import run_eager
from ._util import prune_initializers

LEVEL = 1
ORDER = 20
_NEVER = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}


def apply(graph, context) -> int:
    overridable = {v.name for v in graph.overridable}
    inputs = {v.name for v in graph.inputs}
    consts = {k for k in graph.initializers if k not in overridable}
    folded = set()
    for node in graph.nodes:
        if node.op_type in _NEVER or node.domain != "" or not node.output:
            continue
        names = [n for n in node.input if n]
        if any(n not in consts or n in inputs for n in names):
            continue
        if any(a.HasField("g") or a.graphs for a in node.attribute):
            continue
        arrays = [graph.initializers[n] if n else None for n in node.input]
        try:
            op = make_op(node, graph)
            if not op.deterministic:
                continue
            if op.host:  # data-dependent shapes (NonZero, Unique, ...): fold when the result is numeric
                values = op.run_host(arrays, None)
                if not all(isinstance(v, np.ndarray) and v.dtype.kind not in "OUS" for v in values):
                    continue
            else:
                values = run_eager(op, arrays, context.pool)
        except MlrtError:
            continue  # left for run time, where the error (if any) names the inputs too
        for name, value in zip(node.output, values):
            if name:
                graph.initializers[name] = value
                consts.add(name)
        folded.add(id(node))
    if folded:
        graph.nodes[:] = [n for n in graph.nodes if id(n) not in folded]
        prune_initializers(graph)
    return len(folded)
