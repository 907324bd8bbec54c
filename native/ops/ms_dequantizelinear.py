"""DequantizeLinear (com.microsoft, as onnxruntime): ai.onnx DequantizeLinear's semantics
and kernel (per tensor or per axis scale, `axis` default 1); y has the scale's type."""

from .dequantizelinear import DequantizeLinear as _OnnxDequantizeLinear


class DequantizeLinear(_OnnxDequantizeLinear):
    domain = "com.microsoft"
