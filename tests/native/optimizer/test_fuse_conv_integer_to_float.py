"""fuse_conv_integer_to_float: the chain quantize_dynamic writes after each ConvInteger
(Cast, Mul by the product of the scales, Add of the bias, Relu or Clip) becomes one
ConvIntegerToFloat, bit for bit the chain's result -- against mlrt's unfused graph and
against onnxruntime, which runs the chain node by node -- and chains that do not match
stay as they are.  A MobileNetV2 quantized by onnxruntime's own quantize_dynamic runs
every convolution fused and gives onnxruntime's outputs."""

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt
import mlrt.lowlevel as ml

rng = np.random.default_rng(8)
ALL, BASIC = ml.GraphOptimizationLevel.ORT_ENABLE_ALL, ml.GraphOptimizationLevel.ORT_ENABLE_BASIC
X_SHAPE = (2, 8, 9, 10)


def _session(m, level):
    so = ml.SessionOptions()
    so.graph_optimization_level = level
    return ml.InferenceSession(m, so)


def _chain(m=12, kernel=3, group=1, strides=(1, 1), per_channel=False, bias="plain", act="relu6",
           w_type=np.int8, w_zero=True, scale_from_dq=True, extra_reader=False):
    """x [2, 8, 9, 10] -> DynamicQuantizeLinear -> ConvInteger(W) -> Cast -> Mul(scale) [-> Add(bias)]
    [-> activation]."""
    c = X_SHAPE[1]
    wshape = (m, c // group, kernel, kernel)
    info = np.iinfo(w_type)
    w = rng.integers(info.min, info.max, wshape, endpoint=True).astype(w_type)
    ws = (rng.random((m, 1, 1)) * 0.02 + 0.001 if per_channel else np.array(0.013)).astype(np.float32)
    inits = {"w": w, "ws": ws}
    conv_in = ["xq", "w", "xz"]
    if w_zero:
        inits["wz"] = np.array(7 if w_type == np.uint8 else -3, w_type)
        conv_in.append("wz")
    pad = kernel // 2
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("Mul", ["xs" if scale_from_dq else "other_scale", "ws"], ["s"]),
             helper.make_node("ConvInteger", conv_in, ["acc"], group=group, kernel_shape=[kernel, kernel],
                              pads=[pad] * 4, strides=list(strides)),
             helper.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
             helper.make_node("Mul", ["accf", "s"], ["y0"])]
    if not scale_from_dq:
        inits["other_scale"] = np.array(0.02, np.float32)
    last = "y0"
    if bias:
        inits["b"] = rng.standard_normal((1, m, 1, 1) if bias != "channels" else (m, 1, 1)).astype(np.float32)
        nodes.append(helper.make_node("Add", ["b", last] if bias == "first" else [last, "b"], ["y1"]))
        last = "y1"
    if act == "relu":
        nodes.append(helper.make_node("Relu", [last], ["y2"]))
        last = "y2"
    elif act in ("relu6", "clip_max"):
        inits["lo"], inits["hi"] = np.array(0, np.float32), np.array(6, np.float32)
        nodes.append(helper.make_node("Clip", [last, "lo", "hi"] if act == "relu6" else [last, "", "hi"], ["y2"]))
        last = "y2"
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    outputs = [helper.make_tensor_value_info("y", T.FLOAT, None)]
    if extra_reader:
        outputs.append(helper.make_tensor_value_info("accf", T.FLOAT, None))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, list(X_SHAPE))], outputs,
                          [numpy_helper.from_array(v, name) for name, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()


def _check(m, fused: bool):
    x = {"x": (rng.standard_normal(X_SHAPE) * 3 + 0.5).astype(np.float32)}
    s = _session(m, ALL)
    ops = [op for _, op, _ in s.get_node_assignment()]
    assert ("ConvIntegerToFloat" in ops) == fused, ops
    if fused:
        assert not {"Cast", "ConvInteger", "Clip", "Relu"} & set(ops), ops
    got = s.run(None, x)
    for a, b in zip(got, _session(m, BASIC).run(None, x)):
        np.testing.assert_array_equal(a, b)  # (the same float32 operations in the same order)
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the chain node by node (a test dependency)")
    theirs = ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, x)
    for a, b in zip(got, theirs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [None, "plain", "first", "channels"])
@pytest.mark.parametrize("w_type", [np.int8, np.uint8])
def test_chain_fused(per_channel, bias, w_type):
    _check(_chain(per_channel=per_channel, bias=bias, w_type=w_type), fused=True)


@pytest.mark.parametrize("case", [dict(act=None), dict(act="relu"), dict(act="clip_max"),
                                  dict(kernel=1), dict(kernel=1, m=40), dict(strides=(2, 2)),
                                  dict(group=8, m=8), dict(group=8, m=16, strides=(2, 1), per_channel=True),
                                  dict(group=4, m=8), dict(w_zero=False)])
def test_shapes_and_activations_fused(case):
    """1 x 1 and 3 x 3 windows, strides, depthwise (one and two filters a channel) and
    grouped, no activation, Relu, a Clip with no lower bound, no w zero point."""
    _check(_chain(**case), fused=True)


@pytest.mark.parametrize("case", [dict(scale_from_dq=False), dict(extra_reader=True)])
def test_other_chains_stay(case):
    """A scale not made from the quantizer's; the float sums also a graph output."""
    _check(_chain(**case), fused=False)


def test_bad_scale_is_a_clear_error():
    """The fused node checks what it is handed: a w_scale of neither one nor M values."""
    node = helper.make_node("ConvIntegerToFloat", ["x", "w", "xs", "ws"], ["y"], domain="com.microsoft",
                            kernel_shape=[1, 1])
    inits = [numpy_helper.from_array(np.ones((4, 3, 1, 1), np.int8), "w"),
             numpy_helper.from_array(np.array(0.5, np.float32), "xs"),
             numpy_helper.from_array(np.ones(3, np.float32), "ws")]
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.UINT8, [1, 3, 2, 2])],
                          [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(mlrt.MlrtError, match="w_scale"):
        ml.InferenceSession(m.SerializeToString()).run(None, {"x": np.ones((1, 3, 2, 2), np.uint8)})


def test_quantize_dynamic_mobilenet_fused(tmp_path):
    """MobileNetV2 (ReLU6, 64 x 64) through onnxruntime's quantize_dynamic: all 52
    ConvIntegers fused, the outputs the unfused graph's and onnxruntime's bit for bit."""
    quantization = pytest.importorskip("onnxruntime.quantization",
                                       reason="onnxruntime's quantizer makes the model (a test dependency)")
    import onnx
    import onnxruntime as ort
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import models
    model, feeds = models.mobilenet_v2("relu6", size=64)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(model, src)
    quantization.quantize_dynamic(str(src), str(dst), weight_type=quantization.QuantType.QInt8)
    s = _session(str(dst), ALL)
    ops = [op for _, op, _ in s.get_node_assignment()]
    assert "ConvInteger" not in ops and "Cast" not in ops and ops.count("ConvIntegerToFloat") == 52, ops
    got = s.run(None, feeds)
    for a, b in zip(got, _session(str(dst), BASIC).run(None, feeds)):
        np.testing.assert_array_equal(a, b)
    theirs = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(got, theirs):
        np.testing.assert_array_equal(a, b)
