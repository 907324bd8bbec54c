"""App 5: models quantized with onnxruntime.quantization from a small float CNN (Conv,
MaxPool, MatMul + Add, Gemm, Softmax): quantize_dynamic (standard ONNX ops:
DynamicQuantizeLinear, ConvInteger, MatMulInteger) and quantize_static with a
CalibrationDataReader over random data, in QDQ format (QuantizeLinear/DequantizeLinear
around float ops, per-tensor and per-channel) and in QOperator format (QLinearConv,
QLinearMatMul and com.microsoft's QLinearAdd, QGemm, QLinearSoftmax).

The app runs each model with ORT_ENABLE_BASIC and with ORT_ENABLE_ALL. The basic runs
must match onnxruntime's within rtol 1e-5 like every app here. With ORT_ENABLE_ALL,
onnxruntime replaces DequantizeLinear -> op -> QuantizeLinear by integer kernels
(QLinearConv, QGemm, QLinearSoftmax) that round differently from the float ops of the
graph as written, so its own ENABLE_ALL and ENABLE_BASIC outputs of a QDQ model differ by
one quantum of the quantized softmax output (1/255); those outputs are compared within
that quantum."""

import collections

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import apprun

pytest.importorskip("onnxruntime.quantization")
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,  # noqa: E402
                                      quantize_dynamic, quantize_static)


def float_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(53)

    def r(name, std, *shape, center=None):  # weights centred so that the classes vary with the input
        w = rng.normal(0, std, shape)
        w = w - w.mean(axis=center, keepdims=True) if center is not None else w
        return numpy_helper.from_array(w.astype(np.float32), name)

    n = helper.make_node
    nodes = [n("Conv", ["image", "cw", "cb"], ["c"], pads=[1, 1, 1, 1]), n("Relu", ["c"], ["r"]),
             n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]), n("Flatten", ["p"], ["f"]),
             n("MatMul", ["f", "w1"], ["m"]), n("Add", ["m", "b1"], ["a"]), n("Relu", ["a"], ["h"]),
             n("Gemm", ["h", "w2", "b2"], ["logits"]), n("Softmax", ["logits"], ["probs"], axis=1)]
    g = helper.make_graph(nodes, "small_cnn", [helper.make_tensor_value_info("image", T.FLOAT, ["N", 3, 16, 16])],
                          [helper.make_tensor_value_info("probs", T.FLOAT, ["N", 10])],
                          [r("cw", 0.3, 8, 3, 3, 3), r("cb", 0.1, 8), r("w1", 0.06, 512, 32, center=0),
                           r("b1", 0.1, 32), r("w2", 0.4, 32, 10, center=1), r("b2", 0.1, 10)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="tests/apps")
    m.ir_version = 8
    return m


class RandomImages(CalibrationDataReader):
    def __init__(self, count=16):
        rng = np.random.default_rng(52)
        self.batches = iter([{"image": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
                             for _ in range(count)])

    def get_next(self):
        return next(self.batches, None)


def ops(path) -> collections.Counter:
    return collections.Counter((n.domain or "ai.onnx", n.op_type) for n in onnx.load(str(path)).graph.node)


@pytest.fixture
def float_model(tmp_path):
    path = tmp_path / "float.onnx"
    onnx.save(float_cnn(), path)
    return path


def one_quantum(names):
    """(rtol, atol) for the ORT_ENABLE_ALL outputs of quantized models: one step of the
    uint8 softmax output (scale 1/255), plus float rounding."""
    return {f"{n}_all{s}": (0, 1 / 255 + 1e-6) for n in names for s in ("", "_singles")}


def test_dynamic_and_qdq_models(tmp_path, float_model, run_app):
    names = ("dynamic", "dynamic_matmul_u8", "qdq", "qdq_per_channel")
    dynamic, dynamic_u8, qdq, qdq_channel = (tmp_path / f"{n}.onnx" for n in names)
    quantize_dynamic(float_model, dynamic)
    quantize_dynamic(float_model, dynamic_u8, op_types_to_quantize=["MatMul", "Gemm"], weight_type=QuantType.QUInt8)
    quantize_static(float_model, qdq, RandomImages(), quant_format=QuantFormat.QDQ)
    quantize_static(float_model, qdq_channel, RandomImages(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    assert {("ai.onnx", "ConvInteger"), ("ai.onnx", "MatMulInteger"),
            ("ai.onnx", "DynamicQuantizeLinear")} <= set(ops(dynamic))
    assert ("ai.onnx", "MatMulInteger") in ops(dynamic_u8) and ("ai.onnx", "Conv") in ops(dynamic_u8)
    for path in (qdq, qdq_channel):
        assert {d for d, _ in ops(path)} == {"ai.onnx"} and ops(path)[("ai.onnx", "DequantizeLinear")] > 5
    ort, ours = run_app("run_quantized.py", float_model, dynamic, dynamic_u8, qdq, qdq_channel)
    assert sum("agrees with float: 16 / 16" in line for line in ort.lines) >= 2, ort.lines
    assert len({line.split(" ", 1)[1] for line in ort.lines if "agrees with float" in line}) >= 2  # not all alike
    ours.assert_matches(ort, one_quantum(["qdq", "qdq_per_channel"]))


def test_qoperator_model(tmp_path, float_model, run_app):
    qop = tmp_path / "qoperator.onnx"
    quantize_static(float_model, qop, RandomImages(), quant_format=QuantFormat.QOperator)
    assert {("ai.onnx", "QLinearConv"), ("ai.onnx", "QLinearMatMul"), ("com.microsoft", "QLinearAdd"),
            ("com.microsoft", "QGemm"), ("com.microsoft", "QLinearSoftmax")} <= set(ops(qop))
    ort, ours = run_app("run_quantized.py", float_model, qop)
    # integer kernels on both sides, but rounded each its own way: within one output quantum
    ours.assert_matches(ort, {**one_quantum(["qoperator"]),
                              "qoperator_basic": (0, 1 / 255 + 1e-6), "qoperator_basic_singles": (0, 1 / 255 + 1e-6)})
