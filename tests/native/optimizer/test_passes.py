"""Each optimizer pass rewrites what it should, leaves what it must not, and never
changes results (optimized vs unoptimized sessions agree)."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt.lowlevel as ml

rng = np.random.default_rng(0)


def model(nodes, inits, inputs, outputs, ir_version=8, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    return m.SerializeToString()


def session(m, level):
    so = ml.SessionOptions()
    so.graph_optimization_level = level
    return ml.InferenceSession(m, so)


def ops_after(m, level=ml.GraphOptimizationLevel.ORT_ENABLE_BASIC):
    return [op for _, op, _ in session(m, level).get_node_assignment()]


def agree(m, feeds, rtol=1e-5, atol=1e-5):
    a = session(m, ml.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)
    b = session(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, feeds)
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol)


def conv_inits(c_in=3, c_out=4, k=3, bias=True):
    inits = {"W": rng.standard_normal((c_out, c_in, k, k)).astype(np.float32)}
    if bias:
        inits["B"] = rng.standard_normal(c_out).astype(np.float32)
    return inits


X = helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])
Y = helper.make_tensor_value_info("y", T.FLOAT, None)


@pytest.mark.parametrize("bias", [True, False])
def test_conv_bn_fused(bias):
    inits = conv_inits(bias=bias)
    inits.update(scale=rng.uniform(0.5, 2, 4).astype(np.float32), beta=rng.standard_normal(4).astype(np.float32),
                 mean=rng.standard_normal(4).astype(np.float32), var=rng.uniform(0.5, 2, 4).astype(np.float32))
    conv_in = ["x", "W", "B"] if bias else ["x", "W"]
    nodes = [helper.make_node("Conv", conv_in, ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"], ["y"], epsilon=1e-3)]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m) == ["Conv"]
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_DISABLE_ALL) == ["Conv", "BatchNormalization"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_conv_bn_not_fused_when_conv_output_is_shared():
    inits = conv_inits()
    inits.update(s=np.ones(4, np.float32), b=np.zeros(4, np.float32), m=np.zeros(4, np.float32), v=np.ones(4, np.float32))
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"]),
             helper.make_node("Relu", ["c"], ["z"])]
    m = model(nodes, inits, [X], [Y, helper.make_tensor_value_info("z", T.FLOAT, None)])
    assert "BatchNormalization" in ops_after(m)


@pytest.mark.parametrize("const_shape", [(4, 1, 1), (1, 4, 1, 1), (1,), ()])
def test_conv_mul_add_fused(const_shape):
    inits = conv_inits()
    inits["m"] = rng.uniform(0.5, 2, const_shape).astype(np.float32)
    inits["a"] = rng.standard_normal(const_shape).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"]),
             helper.make_node("Mul", ["c", "m"], ["d"]),
             helper.make_node("Add", ["a", "d"], ["y"])]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m) == ["Conv"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_conv_mul_not_fused_for_spatial_constant():
    inits = conv_inits()
    inits["m"] = rng.standard_normal((1, 1, 6, 6)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"]), helper.make_node("Mul", ["c", "m"], ["y"])]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m) == ["Conv", "Mul"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_identity_and_dropout_removed():
    nodes = [helper.make_node("Identity", ["x"], ["a"]), helper.make_node("Dropout", ["a"], ["b"]),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Identity", ["c"], ["y"])]
    m = model(nodes, {}, [X], [Y])
    assert ops_after(m) == ["Relu", "Identity"]  # the last Identity names a graph output: kept
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_constant_folding_respects_overridable_initializers():
    inits = {"a": np.ones(3, np.float32), "b": np.full(3, 2, np.float32)}
    nodes = [helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Mul", ["x3", "c"], ["y"])]
    x3 = helper.make_tensor_value_info("x3", T.FLOAT, [3])
    b_in = helper.make_tensor_value_info("b", T.FLOAT, [3])
    folded = model(nodes, inits, [x3], [Y])
    assert ops_after(folded) == ["Mul"]
    overridable = model(nodes, inits, [x3, b_in], [Y], ir_version=8)
    assert ops_after(overridable) == ["Add", "Mul"]
    s = session(overridable, ml.GraphOptimizationLevel.ORT_ENABLE_ALL)
    x = np.ones(3, np.float32)
    np.testing.assert_allclose(s.run(None, {"x3": x, "b": np.full(3, 5, np.float32)})[0], np.full(3, 6))
    a_in = helper.make_tensor_value_info("a", T.FLOAT, [3])
    old_ir = model(nodes, inits, [x3, a_in, b_in], [Y], ir_version=3)  # IR < 4: initializers are constants
    assert ops_after(old_ir) == ["Mul"]


@pytest.mark.parametrize("act, attrs", [("Relu", {}), ("LeakyRelu", {"alpha": 0.2}), ("Sigmoid", {}),
                                        ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Tanh", {}),
                                        ("HardSwish", {})])
def test_conv_activation_fused(act, attrs):
    inits = conv_inits()
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]), helper.make_node(act, ["c"], ["y"], **attrs)]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["FusedConv"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


@pytest.mark.parametrize("gate, attrs", [("Sigmoid", {}), ("HardSigmoid", {}), ("HardSigmoid", {"alpha": 0.25})])
@pytest.mark.parametrize("order", ["value_first", "gate_first"])
def test_conv_gated_activation_fused(gate, attrs, order):
    """SiLU (conv * Sigmoid(conv)) and HardSwish written as conv * HardSigmoid(conv)."""
    inits = conv_inits()
    mul_in = ["c", "g"] if order == "value_first" else ["g", "c"]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(gate, ["c"], ["g"], **attrs), helper.make_node("Mul", mul_in, ["y"])]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["FusedConv"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_conv_residual_then_silu_fused():
    inits = conv_inits(c_in=4, c_out=4)
    nodes = [helper.make_node("Conv", ["x4", "W", "B"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Add", ["c", "x4"], ["s"]),
             helper.make_node("Sigmoid", ["s"], ["g"]), helper.make_node("Mul", ["s", "g"], ["y"])]
    x4 = helper.make_tensor_value_info("x4", T.FLOAT, [1, 4, 8, 8])
    m = model(nodes, inits, [x4], [Y])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["FusedConv"]
    agree(m, {"x4": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)})


@pytest.mark.parametrize("case", ["gate_is_output", "value_read_elsewhere", "other_gate"])
def test_gated_activation_not_fused(case):
    """The gate's output is a graph output, the Conv feeds a third node, or the gate is not a sigmoid."""
    inits = conv_inits()
    gate = "Tanh" if case == "other_gate" else "Sigmoid"
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(gate, ["c"], ["g"]), helper.make_node("Mul", ["c", "g"], ["y"])]
    outputs = [Y]
    if case == "gate_is_output":
        outputs.append(helper.make_tensor_value_info("g", T.FLOAT, None))
    if case == "value_read_elsewhere":
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        outputs.append(helper.make_tensor_value_info("r", T.FLOAT, None))
    m = model(nodes, inits, [X], outputs)
    assert "Conv" in ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL)
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


@pytest.mark.parametrize("add", ["Add", "Sum"])
@pytest.mark.parametrize("with_relu", [True, False])
def test_conv_residual_add_fused(with_relu, add):
    """y = relu(conv(x) + r): the residual Add and the Relu ride on the Conv."""
    inits = conv_inits(c_in=4, c_out=4)
    nodes = [helper.make_node("Relu", ["x4"], ["r"]), helper.make_node("Conv", ["x4", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(add, ["c", "r"], ["s" if with_relu else "y"])]
    if with_relu:
        nodes.append(helper.make_node("Relu", ["s"], ["y"]))
    x4 = helper.make_tensor_value_info("x4", T.FLOAT, [1, 4, 8, 8])
    m = model(nodes, inits, [x4], [Y])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["Relu", "FusedConv"]
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_BASIC) == ["Relu", "Conv", add] + (["Relu"] if with_relu else [])
    agree(m, {"x4": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)})


def test_clip_with_runtime_bounds_not_fused():
    inits = conv_inits()
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"]), helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    lo = helper.make_tensor_value_info("lo", T.FLOAT, [])
    hi = helper.make_tensor_value_info("hi", T.FLOAT, [])
    m = model(nodes, inits, [X, lo, hi], [Y])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["Conv", "Clip"]


def test_bn_mul_add_folded():
    c = 3
    inits = {"s": rng.uniform(0.5, 2, c).astype(np.float32), "b": rng.standard_normal(c).astype(np.float32),
             "m": rng.standard_normal(c).astype(np.float32), "v": rng.uniform(0.5, 2, c).astype(np.float32),
             "k": rng.uniform(0.5, 2, (c, 1, 1)).astype(np.float32), "a": rng.standard_normal((c, 1, 1)).astype(np.float32)}
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"]),
             helper.make_node("Mul", ["n", "k"], ["p"]), helper.make_node("Add", ["p", "a"], ["y"])]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m) == ["BatchNormalization"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})


def test_disabled_optimizers_leave_their_rewrite_out():
    """InferenceSession(..., disabled_optimizers=[...]) as in onnxruntime, with mlrt's pass names."""
    inits = conv_inits()
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    m = model(nodes, inits, [X], [Y])
    so = ml.SessionOptions()
    kept = ml.InferenceSession(m, so, disabled_optimizers=["fuse_conv_activation"])
    assert [op for _, op, _ in kept.get_node_assignment()] == ["Conv", "Relu"]
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(kept.run(None, {"x": x})[0], ml.InferenceSession(m).run(None, {"x": x})[0], rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ml.InvalidArgument, match="no_such_pass"):
        ml.InferenceSession(m, so, disabled_optimizers=["no_such_pass"])


@pytest.mark.parametrize("scale", ["Div", "Mul"])
def test_conv_hard_swish_spelled_out_fused(scale):
    """conv * Clip(conv + 3, 0, 6) / 6, as paddle2onnx writes HardSwish."""
    inits = {**conv_inits(), "three": np.array(3, np.float32), "zero": np.array(0, np.float32),
             "six": np.array(6, np.float32), "sixth": np.array(1 / 6, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Add", ["c", "three"], ["a"]),
             helper.make_node("Clip", ["a", "zero", "six"], ["k"]), helper.make_node("Mul", ["c", "k"], ["m"]),
             helper.make_node(scale, ["m", "six" if scale == "Div" else "sixth"], ["y"])]
    m = model(nodes, inits, [X], [Y])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["FusedConv"]
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32) * 4})


def test_hard_swish_with_other_bounds_not_fused():
    inits = {**conv_inits(), "three": np.array(3, np.float32), "one": np.array(1, np.float32),
             "six": np.array(6, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Add", ["c", "three"], ["a"]),
             helper.make_node("Clip", ["a", "one", "six"], ["k"]), helper.make_node("Mul", ["c", "k"], ["m"]),
             helper.make_node("Div", ["m", "six"], ["y"])]
    m = model(nodes, inits, [X], [Y])
    assert "Clip" in ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL)
    agree(m, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32) * 4})


# -- GELU spelled out -> Gelu ----------------------------------------------------------------

GELU_INITS = {"sqrt2": np.array(np.sqrt(2), np.float32), "rsqrt2": np.array(1 / np.sqrt(2), np.float32),
              "one": np.array(1, np.float32), "half": np.array(0.5, np.float32)}
GELU_X = helper.make_tensor_value_info("x", T.FLOAT, [2, 64])


def gelu_nodes(scale="Div", half="last", swap=False, sqrt2="sqrt2", one="one"):
    """x * 0.5 * (1 + Erf(x / sqrt 2)) as exporters write it: `scale` Div by sqrt 2 or Mul
    by 1 / sqrt 2, the 0.5 applied `half` (last, first, or to the sum), operands of every
    Mul and Add swapped if `swap`."""
    o = (lambda a, b: [b, a]) if swap else (lambda a, b: [a, b])
    nodes = [helper.make_node("Div", ["x", sqrt2], ["d"]) if scale == "Div"
             else helper.make_node("Mul", o("x", "rsqrt2" if sqrt2 == "sqrt2" else sqrt2), ["d"]),
             helper.make_node("Erf", ["d"], ["e"]), helper.make_node("Add", o("e", one), ["a"])]
    if half == "last":
        nodes += [helper.make_node("Mul", o("x", "a"), ["m"]), helper.make_node("Mul", o("m", "half"), ["y"])]
    elif half == "first":
        nodes += [helper.make_node("Mul", o("x", "half"), ["h"]), helper.make_node("Mul", o("h", "a"), ["y"])]
    else:
        nodes += [helper.make_node("Mul", o("a", "half"), ["m"]), helper.make_node("Mul", o("x", "m"), ["y"])]
    return nodes


@pytest.mark.parametrize("scale", ["Div", "Mul"])
@pytest.mark.parametrize("half", ["last", "first", "sum"])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("opset", [13, 20])
def test_gelu_fused(scale, half, swap, opset):
    m = model(gelu_nodes(scale, half, swap), GELU_INITS, [GELU_X], [Y], opset=opset)
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_EXTENDED) == ["Gelu"]
    assert len(ops_after(m)) == 5  # a level 2 pass
    agree(m, {"x": rng.standard_normal((2, 64)).astype(np.float32) * 4})


def test_stacked_gelus_fused():
    names = {"x": "y", "d": "d2", "e": "e2", "a": "a2", "m": "m2", "y": "y2"}  # the second reads the first's y
    nodes = gelu_nodes() + [helper.make_node(n.op_type, [names.get(i, i) for i in n.input], [names[n.output[0]]])
                            for n in gelu_nodes()]
    m = model(nodes, GELU_INITS, [GELU_X], [helper.make_tensor_value_info("y2", T.FLOAT, None)])
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL) == ["Gelu", "Gelu"]
    agree(m, {"x": rng.standard_normal((2, 64)).astype(np.float32) * 4})


@pytest.mark.parametrize("case", ["sqrt2", "one", "half", "shared", "output", "vector", "input"])
def test_gelu_not_fused(case):
    """A wrong constant, a non-scalar or non-constant one, an intermediate read twice or
    given as a graph output: the chain stays as it is."""
    inits, inputs, outputs = dict(GELU_INITS), [GELU_X], [Y]
    kw = {}
    if case == "sqrt2":
        inits["bad"] = np.array(1.4143, np.float32)
        kw["sqrt2"] = "bad"
    elif case == "one":
        inits["bad"] = np.array(1.00001, np.float32)
        kw["one"] = "bad"
    elif case == "half":
        inits["half"] = np.array(0.4999, np.float32)
    elif case == "vector":
        inits["sqrt2"] = np.full(64, np.sqrt(2), np.float32)
    elif case == "input":
        inputs = [GELU_X, helper.make_tensor_value_info("sqrt2", T.FLOAT, [])]
        del inits["sqrt2"]
    nodes = gelu_nodes(**kw)
    if case == "shared":
        nodes.append(helper.make_node("Neg", ["e"], ["z"]))
        outputs = [Y, helper.make_tensor_value_info("z", T.FLOAT, None)]
    elif case == "output":
        outputs = [Y, helper.make_tensor_value_info("a", T.FLOAT, None)]
    m = model(nodes, inits, inputs, outputs)
    assert "Erf" in ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL)
    feeds = {"x": rng.standard_normal((2, 64)).astype(np.float32)}
    if case == "input":
        feeds["sqrt2"] = np.array(np.sqrt(2), np.float32)
    agree(m, feeds)


# -- Add + LayerNormalization -> SkipLayerNormalization -------------------------------------------

def skip_ln_model(bias=None, beta=True, sum_out=False, skip_shape=("batch", 5, 8), ln_outputs=1, axis=-1):
    """x + s (+ a bias 1-D constant on x first, bias in ("left", "right")) -> LayerNormalization."""
    inits = {"g": rng.standard_normal(8).astype(np.float32), "b": rng.standard_normal(8).astype(np.float32),
             "c": rng.standard_normal(8).astype(np.float32)}
    nodes, x = [], "x"
    if bias:
        nodes.append(helper.make_node("Add", ["x", "c"] if bias == "left" else ["c", "x"], ["xb"]))
        x = "xb"
    nodes.append(helper.make_node("Add", [x, "s"], ["sum"]))
    ln_out = ["y"] + (["mean", "inv"] if ln_outputs == 3 else [])
    nodes.append(helper.make_node("LayerNormalization", ["sum", "g"] + (["b"] if beta else []), ln_out, axis=axis,
                                  epsilon=1e-5))
    outputs = [Y] + ([helper.make_tensor_value_info("sum", T.FLOAT, None)] if sum_out else [])
    outputs += [helper.make_tensor_value_info(n, T.FLOAT, None) for n in ln_out[1:]]
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 5, 8]),
              helper.make_tensor_value_info("s", T.FLOAT, list(skip_shape))]
    return model(nodes, inits, inputs, outputs)


def skip_ln_feeds(skip_shape=(2, 5, 8)):
    return {"x": rng.standard_normal((2, 5, 8)).astype(np.float32),
            "s": rng.standard_normal(skip_shape).astype(np.float32)}


@pytest.mark.parametrize("bias", [None, "left", "right"])
@pytest.mark.parametrize("beta", [True, False])
def test_skip_layer_norm_fused(bias, beta):
    m = skip_ln_model(bias, beta)
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_EXTENDED) == ["SkipLayerNormalization"]
    feeds = skip_ln_feeds()
    agree(m, feeds)
    import onnxruntime as ort  # the oracle: onnxruntime runs the unfused graph
    want = ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(session(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, feeds)[0], want[0],
                               rtol=1e-5, atol=1e-5)


def test_skip_layer_norm_keeps_a_sum_read_elsewhere():
    m = skip_ln_model("left", sum_out=True)  # (pre-norm transformers carry the sum on)
    assert ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_EXTENDED) == ["SkipLayerNormalization"]
    agree(m, skip_ln_feeds())


@pytest.mark.parametrize("case", ["broadcast skip", "stats read", "axis 1"])
def test_skip_layer_norm_not_fused(case):
    kwargs = {"broadcast skip": {"skip_shape": (1, 1, 8)}, "stats read": {"ln_outputs": 3},
              "axis 1": {"axis": 1}}[case]
    m = skip_ln_model(**kwargs)
    assert "SkipLayerNormalization" not in ops_after(m, ml.GraphOptimizationLevel.ORT_ENABLE_ALL)
    if case != "axis 1":  # (axis 1 needs a scale of the last two dims)
        agree(m, skip_ln_feeds(kwargs.get("skip_shape", (2, 5, 8))))


def test_skip_layer_norm_left_alone_for_opencl():
    # the OpenCL provider runs LayerNormalization, not SkipLayerNormalization: no fusion there
    if "OpenCLExecutionProvider" not in ml.get_available_providers():
        pytest.skip("no OpenCL device (the test extras bring Intel's CPU runtime)")
    s = ml.InferenceSession(skip_ln_model("left"), providers=["OpenCLExecutionProvider", "CPUExecutionProvider"])
    ops = [op for _, op, _ in s.get_node_assignment() if not op.startswith("Memcpy")]
    assert ops == ["Add", "Add", "LayerNormalization"]
