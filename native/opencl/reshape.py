"""Shape-only operators on OpenCL: the output is the input's buffer under a new shape
(Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout in inference)."""

from ._runtime import recorder
from .movement import ANY


@recorder("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", family=None, dtypes=ANY)
def same_bytes(k, op, inputs, outputs):
    k.alias(0, 0)


def _inference_only(op, inputs) -> bool:
    """No mask output and no training_mode input: Dropout is the identity."""
    outs, ins = op.node.output, op.node.input
    return not (len(outs) > 1 and outs[1]) and not (len(ins) > 2 and ins[2])


@recorder("Dropout", family=None, dtypes=ANY, supports=_inference_only)
def dropout(k, op, inputs, outputs):
    k.alias(0, 0)
