"""benchmarks/compute_bound.py's FLOP count, against counts worked out by hand."""

import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import compute_bound  # noqa: E402


def _model(batch):
    w = numpy_helper.from_array(np.zeros((8, 2, 3, 3), np.float32), "w")  # 2 groups of 4 -> 8
    wt = numpy_helper.from_array(np.zeros((8, 3, 2, 2), np.float32), "wt")  # 8 -> 3, 2x2 stride 2
    b = numpy_helper.from_array(np.zeros((48, 10), np.float32), "b")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], group=2, pads=[1, 1, 1, 1]),  # (n, 8, 5, 6)
        helper.make_node("ConvTranspose", ["c", "wt"], ["t"], strides=[2, 2]),  # (n, 3, 10, 12)
        helper.make_node("Relu", ["t"], ["r"]),
        helper.make_node("Reshape", ["r", "s"], ["f"]),  # (n * 15, 24)
        helper.make_node("Gemm", ["f", "b"], ["y"], transA=1),  # A^T: (24, n * 15) -> K = n * 15
    ]
    s = numpy_helper.from_array(np.array([-1, 24], np.int64), "s")
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4, 5, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, wt, b, s])
    return helper.make_model(g, opset_imports=[helper.make_operatorsetid("", 17)])


def test_flops_of_conv_convtranspose_and_gemm():
    conv = 2 * (8 * 5 * 6) * 2 * 9  # outputs x (C/group x kernel)
    convt = 2 * (8 * 5 * 6) * 3 * 4  # inputs x (M/group x kernel)
    gemm = 2 * (24 * 10) * 15  # outputs x K, K from A's first dimension under transA
    assert compute_bound.model_flops(_model(1)) == conv + convt + gemm


def test_symbolic_batch_counts_as_one():
    m = _model(1)
    dim = m.graph.input[0].type.tensor_type.shape.dim[0]
    dim.Clear()
    dim.dim_param = "N"
    assert compute_bound.model_flops(m) == compute_bound.model_flops(_model(1))
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"  # counted on a copy
