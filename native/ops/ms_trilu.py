"""Trilu (com.microsoft, as onnxruntime's contrib op): ai.onnx Trilu's semantics."""

from . import trilu


class Trilu(trilu.Trilu):
    domain = "com.microsoft"
