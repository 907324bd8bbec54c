"""Operators whose outputs are their inputs' bytes on OpenCL: every operator that
declares `Alias(AliasKind.WHOLE, ...)` (native/ops/_base.py; Reshape, Flatten,
Squeeze, Unsqueeze, Identity, Dropout in inference).  The output is the input's buffer
under a new shape; no kernel runs.  A node with an output that is not such an alias
(Dropout's mask) is left to the CPU."""

from ..ops import AliasKind, registry
from ._recorders import recorder
from .movement import ANY


def _whole(op) -> list:
    """The node's WHOLE aliases, for the outputs it has."""
    outs = op.node.output
    return [a for a in op.node_aliases() if a.kind is AliasKind.WHOLE and a.output < len(outs) and outs[a.output]]


def _all_aliases(op, inputs) -> bool:
    """Every output the node has is an input's bytes: nothing is left to compute."""
    aliased = {a.output for a in _whole(op)}
    return all(j in aliased for j, name in enumerate(op.node.output) if name)


def same_bytes(k, op, inputs, outputs):
    for a in _whole(op):
        k.alias(a.output, a.input)


def _register() -> None:
    """The alias recorder for every operator with a version declaring a WHOLE alias."""
    for (domain, op_type), versions in registry().items():
        if any(a.kind is AliasKind.WHOLE for _, cls in versions for a in cls.aliases):
            recorder(op_type, family=None, domain=domain, dtypes=ANY, supports=_all_aliases)(same_bytes)


_register()
