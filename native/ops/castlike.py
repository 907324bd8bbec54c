"""CastLike: y = x converted to the element type of `target_type` (whose values
are not read), by Cast's rules."""

from ._elementwise import _Converting


class CastLike(_Converting):
    attributes = {"saturate": 1, "round_mode": "up"}

    def infer(self, inputs):
        return [self._converted(self.need(inputs, 0), self.need(inputs, 1).dtype)]
