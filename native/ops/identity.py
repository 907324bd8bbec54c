"""Identity: y = x."""

from ._shape import _Reshape


class Identity(_Reshape):
    def out_shape(self, inputs, x):
        return x.shape

    def run_host(self, values, runtime):
        """Sequences, optionals (None when empty) and string tensors pass through as they are."""
        return [values[0] if values else None]
