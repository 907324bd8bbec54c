"""Concat: join tensors along one axis (all other dimensions must agree)."""

import numpy as np

from ._base import Alias, AliasKind, Info, Op, normalize_axis


class Concat(Op):
    attributes = {"axis": 1}  # opset 1: optional, default 1
    params = "mlrt_concat_params"
    moves = (0,)
    aliases = (Alias(AliasKind.GATHER, output=0),)  # the inputs laid end to end along the axis

    def moved_inputs(self, count):
        return list(range(count))

    def infer(self, inputs):
        present = [i for i in inputs if i is not None]
        if not present:
            raise self.fail("needs at least one input")
        first = present[0]
        if first.rank == 0:
            raise self.fail("cannot concatenate scalars")
        axis = normalize_axis(int(self.a.axis), first.rank, self.where)
        total = 0
        for k, x in enumerate(present):
            if np.dtype(x.dtype) != np.dtype(first.dtype):
                raise self.fail(f"input {k} is {np.dtype(x.dtype).name}, input 0 is {np.dtype(first.dtype).name}")
            if x.rank != first.rank or any(a != b for d, (a, b) in enumerate(zip(x.shape, first.shape)) if d != axis):
                raise self.fail(f"input {k} has shape {x.shape}, which does not match {first.shape} "
                                f"except along axis {axis}")
            total += x.shape[axis]
        shape = list(first.shape)
        shape[axis] = total
        return [Info(first.dtype, tuple(shape))]

    def pack(self, inputs, outputs):
        return {"axis": normalize_axis(int(self.a.axis), outputs[0].rank, self.where)}


class Concat_4(Concat):
    attributes = {"axis": None}

    def infer(self, inputs):
        if self.a.axis is None:
            raise self.fail("attribute 'axis' is missing")
        return super().infer(inputs)
