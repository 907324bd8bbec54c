"""Transpose: permute the axes (default: reverse them)."""

from ._base import Info
from ._shape import _Copy, ints, permuted_view


class Transpose(_Copy):
    attributes = {"perm": None}

    def perm(self, rank: int) -> list[int]:
        if self.a.perm is None:
            return list(range(rank))[::-1]
        perm = ints(self.a.perm)
        if sorted(perm) != list(range(rank)):
            raise self.fail(f"perm {perm} is not a permutation of the {rank} input axes")
        return perm

    def infer(self, inputs):
        x = self.need(inputs, 0)
        return [Info(x.dtype, tuple(x.shape[p] for p in self.perm(x.rank)))]

    def view(self, inputs, outputs):
        x = inputs[0]
        return permuted_view(x.shape, self.perm(x.rank))
