"""Tile: repeat the input along every axis (opset 1: `tiles` copies along one `axis`)."""

from ._base import Info, Op, normalize_axis
from ._shape import ints


class Tile(Op):
    value_inputs = (1, 2)
    moves = (0,)

    def repeats(self, inputs, x) -> list[int]:
        tiles = ints(self.value_of(inputs, 1))
        axis = ints(self.value_of(inputs, 2))
        if len(tiles) != 1 or len(axis) != 1:
            raise self.fail("tiles and axis must be scalars")
        reps = [1] * x.rank
        reps[normalize_axis(axis[0], x.rank, self.where)] = tiles[0]
        return reps

    def infer(self, inputs):
        x = self.need(inputs, 0)
        reps = self.repeats(inputs, x)
        if len(reps) != x.rank or any(r < 0 for r in reps):
            raise self.fail(f"repeats {reps} must be {x.rank} non-negative numbers")
        return [Info(x.dtype, tuple(d * r for d, r in zip(x.shape, reps)))]


class Tile_6(Tile):
    value_inputs = (1,)

    def repeats(self, inputs, x):
        return ints(self.value_of(inputs, 1))
