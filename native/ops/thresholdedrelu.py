"""ThresholdedRelu: y = x if x > alpha else 0."""

from ._elementwise import _Activation


class ThresholdedRelu(_Activation):
    attributes = {"alpha": 1.0}
