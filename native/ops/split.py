"""Split: cut a tensor into pieces along an axis.

The sizes come from the `split` attribute (opset 1-12; opset 1 also took it as input
1), from input 1 (opset 13+), or from `num_outputs` (opset 18+: ceil-sized chunks,
the last one smaller); otherwise the axis is cut into equal parts, one per output."""

from ._base import Alias, AliasKind, Info, Op, normalize_axis
from ._shape import ints


class Split(Op):
    attributes = {"axis": 0, "split": None}
    params = "mlrt_split_params"
    moves = (0,)
    value_inputs = (1,)
    aliases = (Alias(AliasKind.SLICES, input=0),)  # the outputs are the input cut along the axis

    def given(self, inputs):
        """Explicit sizes, or None."""
        if self.a.split is not None:
            return ints(self.a.split)
        value = self.value_of(inputs, 1)
        return None if value is None else ints(value)

    def sizes(self, inputs, dim: int) -> list[int]:
        n = len(self.node.output)
        split = self.given(inputs)
        if split is None:
            num = getattr(self.a, "num_outputs", None)
            if num is not None:
                if num != n or num < 1:
                    raise self.fail(f"num_outputs is {num} but the node has {n} outputs")
                chunk = -(-dim // num)
                split = [chunk] * (num - 1) + [dim - chunk * (num - 1)]
                if split[-1] < 0:
                    raise self.fail(f"cannot cut {dim} into {num} chunks of {chunk}")
                return split
            if dim % n:
                raise self.fail(f"cannot split a dimension of {dim} into {n} equal parts")
            return [dim // n] * n
        if len(split) != n or sum(split) != dim or any(s < 0 for s in split):
            raise self.fail(f"split {split} does not cut a dimension of {dim} into {n} outputs")
        return split

    def infer(self, inputs):
        x = self.need(inputs, 0)
        if x.rank == 0:
            raise self.fail("cannot split a scalar (the input must have at least one dimension)")
        axis = normalize_axis(int(self.a.axis), x.rank, self.where)
        outs = []
        for s in self.sizes(inputs, x.shape[axis]):
            shape = list(x.shape)
            shape[axis] = s
            outs.append(Info(x.dtype, tuple(shape)))
        return outs

    def pack(self, inputs, outputs):
        return {"axis": normalize_axis(int(self.a.axis), inputs[0].rank, self.where)}


class Split_2(Split):
    value_inputs = ()

    def given(self, inputs):
        return None if self.a.split is None else ints(self.a.split)


class Split_13(Split):
    attributes = {"axis": 0}

    def given(self, inputs):
        value = self.value_of(inputs, 1)
        return None if value is None else ints(value)


class Split_18(Split_13):
    attributes = {"axis": 0, "num_outputs": None}
