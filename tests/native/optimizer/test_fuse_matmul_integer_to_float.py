"""fuse_matmul_integer_to_float: the chain quantize_dynamic writes for a MatMul becomes one
com.microsoft MatMulIntegerToFloat, bit for bit the chain's result, and patterns that
do not match stay as they are.  A transformer quantized by onnxruntime's own
quantize_dynamic gives the unfused graph's outputs, and onnxruntime's to its tolerance."""

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt.lowlevel as ml

rng = np.random.default_rng(5)
ALL, BASIC = ml.GraphOptimizationLevel.ORT_ENABLE_ALL, ml.GraphOptimizationLevel.ORT_ENABLE_BASIC


def _session(m, level):
    so = ml.SessionOptions()
    so.graph_optimization_level = level
    return ml.InferenceSession(m, so)


def _chain(k=24, n=10, per_column=False, bias="plain", w_type=np.int8, b_zero=True, scale_from_dq=True,
           extra_reader=False):
    """x [2, 5, k] -> DynamicQuantizeLinear -> MatMulInteger(W [k, n]) -> Cast -> Mul(scale) [-> Add(bias)]."""
    w = rng.integers(-100, 100, (k, n)).astype(w_type) if w_type == np.int8 else \
        rng.integers(0, 255, (k, n)).astype(w_type)
    ws = (rng.random(n) * 0.02 + 0.001 if per_column else np.array(0.013)).astype(np.float32)
    inits = {"w": w, "ws": ws}
    mm_in = ["xq", "w", "xz"]
    if b_zero:
        inits["wz"] = (np.full(ws.shape, 3) if w_type == np.uint8 else np.zeros(ws.shape)).astype(w_type)
        mm_in.append("wz")
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("Mul", ["xs" if scale_from_dq else "other_scale", "ws"], ["s"]),
             helper.make_node("MatMulInteger", mm_in, ["acc"]),
             helper.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
             helper.make_node("Mul", ["accf", "s"], ["y0" if bias else "y"])]
    if not scale_from_dq:
        inits["other_scale"] = np.array(0.02, np.float32)
    outputs = [helper.make_tensor_value_info("y", T.FLOAT, None)]
    if bias:
        inits["b"] = rng.standard_normal((1, n) if bias == "row" else (n,)).astype(np.float32)
        nodes.append(helper.make_node("Add", ["b", "y0"] if bias == "first" else ["y0", "b"], ["y"]))
    if extra_reader:
        outputs.append(helper.make_tensor_value_info("accf", T.FLOAT, None))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 5, k])], outputs,
                          [numpy_helper.from_array(v, name) for name, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _check(m, fused: bool):
    x = {"x": rng.standard_normal((2, 5, 24)).astype(np.float32) * 3}
    s = _session(m, ALL)
    ops = [op for _, op, _ in s.get_node_assignment()]
    assert ("MatMulIntegerToFloat" in ops) == fused, ops
    if fused:
        assert not {"Cast", "MatMulInteger"} & set(ops), ops
    want = _session(m, BASIC).run(None, x)
    for got, ref in zip(s.run(None, x), want):
        np.testing.assert_array_equal(got, ref)  # (the same float32 operations in the same order)


@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("bias", [None, "plain", "first", "row"])
@pytest.mark.parametrize("w_type", [np.int8, np.uint8])
def test_chain_fused(per_column, bias, w_type):
    _check(_chain(per_column=per_column, bias=bias, w_type=w_type), fused=True)


def test_chain_without_b_zero_point_fused():
    _check(_chain(b_zero=False), fused=True)


@pytest.mark.parametrize("case", [dict(scale_from_dq=False), dict(extra_reader=True)])
def test_other_chains_stay(case):
    """A scale not made from the quantizer's; the float product also a graph output."""
    _check(_chain(**case), fused=False)


def test_quantize_dynamic_transformer_fused(tmp_path):
    """A BERT-style encoder through onnxruntime's quantize_dynamic: every MatMulInteger
    fused, the outputs the unfused graph's bit for bit, onnxruntime's to 1e-4 relative."""
    quantization = pytest.importorskip("onnxruntime.quantization",
                                       reason="onnxruntime's quantizer makes the model (a test dependency)")
    import onnx
    import onnxruntime as ort
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import models
    model, feeds = models.bert_encoder(seq=16, hidden=64, heads=2, layers=2, vocab=100)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(model, src)
    quantization.quantize_dynamic(str(src), str(dst), weight_type=quantization.QuantType.QInt8)
    s = _session(str(dst), ALL)
    ops = [op for _, op, _ in s.get_node_assignment()]
    assert "MatMulInteger" not in ops and ops.count("MatMulIntegerToFloat") == 12, ops
    got = s.run(None, feeds)
    for a, b in zip(got, _session(str(dst), BASIC).run(None, feeds)):
        np.testing.assert_array_equal(a, b)
    theirs = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(got, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(b))))
