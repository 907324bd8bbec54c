"""Scatter (opset 9-10, deprecated): ScatterElements without reduction."""

from .scatterelements import ScatterElements


class Scatter(ScatterElements):
    attributes = {"axis": 0}
    kernel = "ScatterElements"

    def __init__(self, node, opset):
        super().__init__(node, opset)
        self.a.reduction = "none"
