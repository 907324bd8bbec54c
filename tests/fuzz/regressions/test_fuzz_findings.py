"""Models the atheris harness (tests/fuzz/fuzz_harness.py) found escaping as a
non-MlrtError exception, minimised: each must now end in a result or an MlrtError."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlrt
import mlrt.lowlevel as ll


def model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "fuzz", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def run(data, feed):
    try:
        return ll.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feed)
    except mlrt.MlrtError as exc:
        return exc


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_split_of_a_scalar():  # was IndexError in native/ops/split.py infer
    data = model([helper.make_node("Split", ["x"], ["a", "b"], axis=0)], [f32("x", [])], [f32("a", None), f32("b", None)])
    assert isinstance(run(data, {"x": np.float32(1)}), mlrt.MlrtError)


def test_eyelike_of_a_complex_dtype():  # was ValueError in native/ops/_shape.py bits_of (16-byte element)
    data = model([helper.make_node("EyeLike", ["x"], ["y"], dtype=TensorProto.COMPLEX128)], [f32("x", [2, 2])],
                 [helper.make_tensor_value_info("y", TensorProto.COMPLEX128, None)])
    assert isinstance(run(data, {"x": np.zeros((2, 2), np.float32)}), mlrt.MlrtError)


def test_output_of_an_unknown_element_type():  # was KeyError in lowlevel/_session.py _type_string
    data = model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])],
                 [helper.make_tensor_value_info("y", 99, None)])
    assert isinstance(run(data, {"x": np.zeros(2, np.float32)}), mlrt.InvalidModel)


def test_unique_along_an_empty_axis():  # was ValueError (reshape -1 of an empty array) in native/ops/unique.py
    data = model([helper.make_node("Unique", ["x"], ["y"], axis=0)], [f32("x", [0, 3])], [f32("y", None)])
    got = run(data, {"x": np.zeros((0, 3), np.float32)})
    assert isinstance(got, mlrt.MlrtError) or got[0].size == 0


def test_constant_of_shape_of_rank_100():  # was ValueError (numpy's 64 dimensions) in native/ops/constantofshape.py
    shape = helper.make_tensor("s", TensorProto.INT64, [100], [1] * 100)
    data = model([helper.make_node("ConstantOfShape", ["s"], ["y"])], [], [f32("y", None)])
    m = __import__("onnx").load_from_string(data)
    m.graph.initializer.append(shape)
    assert isinstance(run(m.SerializeToString(), {}), mlrt.MlrtError)


@pytest.mark.parametrize("attr", ["short tensor", "bad utf-8"])
def test_unreadable_attributes(attr):  # were ValueError / UnicodeDecodeError in native/ops/_base.py
    if attr == "short tensor":
        value = helper.make_tensor("v", TensorProto.FLOAT, [1], np.zeros(1, np.float32).tobytes(), raw=True)
        value.raw_data = b""
        node = helper.make_node("ConstantOfShape", ["s"], ["y"], value=value)
        inputs = [helper.make_tensor_value_info("s", TensorProto.INT64, [1])]
        feed = {"s": np.array([2], np.int64)}
    else:
        node = helper.make_node("Pad", ["x", "p"], ["y"], mode=b"con\xf4\x00tant")
        inputs = [f32("x", [2]), helper.make_tensor_value_info("p", TensorProto.INT64, [2])]
        feed = {"x": np.zeros(2, np.float32), "p": np.array([1, 1], np.int64)}
    assert isinstance(run(model([node], inputs, [f32("y", None)]), feed), mlrt.MlrtError)


def test_topk_of_a_scalar():  # was IndexError in native/ops/topk.py infer
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [1])
    data = model([helper.make_node("TopK", ["x", "k"], ["v", "i"])], [f32("x", []), k],
                 [f32("v", None), helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    assert isinstance(run(data, {"x": np.float32(1), "k": np.array([1], np.int64)}), mlrt.MlrtError)


def test_conv_bn_fusion_with_a_bias_of_the_wrong_length():  # was ValueError in native/optimizer/fuse_conv_bn.py
    from onnx import numpy_helper
    inits = [numpy_helper.from_array(np.ones((2, 1, 1, 1), np.float32), "w"),
             numpy_helper.from_array(np.ones(3, np.float32), "b")]
    inits += [numpy_helper.from_array(np.ones(2, np.float32), n) for n in ("sc", "be", "me", "va")]
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["c"]),
                               helper.make_node("BatchNormalization", ["c", "sc", "be", "me", "va"], ["y"])],
                              "fuzz", [f32("x", [1, 1, 2, 2])], [f32("y", None)], inits)
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    assert isinstance(run(data, {"x": np.ones((1, 1, 2, 2), np.float32)}), mlrt.MlrtError)


def test_convtranspose_with_an_empty_kernel():  # was SIGFPE (a division by zero) in the C ConvTranspose kernel
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [1, 2, None, 3])
    data = model([helper.make_node("ConvTranspose", ["x", "w"], ["y"])], [f32("x", [1, 1, 3, 3]), w],
                 [f32("y", None)], opset=22)
    got = run(data, {"x": np.ones((1, 1, 3, 3), np.float32), "w": np.ones((1, 2, 0, 3), np.float32)})
    assert isinstance(got, mlrt.MlrtError)


def test_string_tensor_fed_as_a_shape():  # was ValueError (int() of a string) in native/ops/_shape.py ints
    data = model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                 [f32("x", [2, 2]), helper.make_tensor_value_info("s", TensorProto.STRING, [2])], [f32("y", None)])
    got = run(data, {"x": np.zeros((2, 2), np.float32), "s": np.array(["a", "b"], object)})
    assert isinstance(got, mlrt.MlrtError)


def test_scan_over_a_scalar():  # was IndexError in native/ops/scan.py run_host
    body = helper.make_graph([helper.make_node("Identity", ["s_in"], ["s_out"]), helper.make_node("Identity", ["e"], ["o"])],
                             "body", [f32("s_in", [1]), f32("e", [])], [f32("s_out", [1]), f32("o", [])])
    data = model([helper.make_node("Scan", ["s0", "xs"], ["s1", "ys"], body=body, num_scan_inputs=1)],
                 [f32("s0", [1]), f32("xs", [])], [f32("s1", None), f32("ys", None)], opset=11)
    assert isinstance(run(data, {"s0": np.zeros(1, np.float32), "xs": np.float32(1)}), mlrt.MlrtError)


def test_value_name_that_is_not_utf8():  # was TypeError (bytes in a join) in native/ops/_base.py
    data = model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])], [f32("y", [2])])
    bad = data.replace(b"\x12\x01y", b"\x12\x01\xff").replace(b"\n\x01y", b"\n\x01\xff")
    assert bad != data
    assert isinstance(run(bad, {"x": np.zeros(2, np.float32)}), mlrt.MlrtError)


def test_pad_of_complex_values():  # was ValueError (16-byte element) in native/ops/_shape.py bits_of
    c128 = TensorProto.COMPLEX128
    data = model([helper.make_node("Pad", ["x", "p"], ["y"])],
                 [helper.make_tensor_value_info("x", c128, [2]), helper.make_tensor_value_info("p", TensorProto.INT64, [2])],
                 [helper.make_tensor_value_info("y", c128, None)])
    got = run(data, {"x": np.ones(2, np.complex128), "p": np.array([1, 1], np.int64)})
    assert isinstance(got, mlrt.MlrtError) or got[0].tolist() == [0, 1, 1, 0]


def test_batchnorm_with_a_bias_of_the_wrong_shape_then_mul():  # was ValueError in native/optimizer/fuse_bn_affine.py
    from onnx import numpy_helper
    c = 4
    inits = [numpy_helper.from_array(np.ones(c, np.float32), "s"), numpy_helper.from_array(np.ones((c, 2), np.float32), "b"),
             numpy_helper.from_array(np.zeros(c, np.float32), "m"), numpy_helper.from_array(np.ones(c, np.float32), "v"),
             numpy_helper.from_array(np.full((c, 1, 1), 2, np.float32), "k")]
    graph = helper.make_graph([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["t"]),
                               helper.make_node("Mul", ["t", "k"], ["y"])], "fuzz", [f32("x", [1, c, 2, 2])],
                              [f32("y", None)], inits)
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    assert isinstance(run(data, {"x": np.ones((1, c, 2, 2), np.float32)}), mlrt.MlrtError)


def test_reduce_axes_of_infinity():  # was OverflowError (int of inf) in native/ops/_reduce.py
    data = model([helper.make_node("ReduceSum", ["x", "a"], ["y"])], [f32("x", [2, 3]), f32("a", [1])], [f32("y", None)],
                 opset=13)
    assert isinstance(run(data, {"x": np.ones((2, 3), np.float32), "a": np.array([np.inf], np.float32)}),
                      mlrt.MlrtError)


def test_conv_activation_fusion_keeps_an_empty_attribute_list():  # was ValueError in fuse_conv_activation.py
    from onnx import numpy_helper
    w = numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")
    conv = helper.make_node("Conv", ["x", "w"], ["t"])
    conv.attribute.append(helper.make_attribute("strides", [], attr_type=__import__("onnx").AttributeProto.INTS))
    graph = helper.make_graph([conv, helper.make_node("Relu", ["t"], ["y"])], "fuzz", [f32("x", [1, 1, 2, 2])],
                              [f32("y", None)], [w])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    got = run(data, {"x": -np.ones((1, 1, 2, 2), np.float32)})
    assert isinstance(got, mlrt.MlrtError) or got[0].tolist() == np.zeros((1, 1, 2, 2)).tolist()


def test_pool_with_a_kernel_of_two_to_the_31():  # was a hang: the C window sweep visited 2^62 taps
    data = model([helper.make_node("AveragePool", ["x"], ["y"], auto_pad="SAME_UPPER", kernel_shape=[2**31, 2**31],
                                   strides=[2, 2])], [f32("x", [1, 1, 5, 5])], [f32("y", None)])
    assert isinstance(run(data, {"x": np.ones((1, 1, 5, 5), np.float32)}), mlrt.MlrtError)


def test_resize_with_string_scales():  # was ValueError (float of a string) in native/ops/_resize.py
    s = helper.make_tensor_value_info("s", TensorProto.STRING, [4])
    data = model([helper.make_node("Resize", ["x", "", "s"], ["y"])], [f32("x", [1, 1, 2, 2]), s], [f32("y", None)],
                 opset=13)
    got = run(data, {"x": np.ones((1, 1, 2, 2), np.float32), "s": np.array(["a", "b", "c", "d"], object)})
    assert isinstance(got, mlrt.MlrtError)


def test_node_name_that_is_not_utf8():  # was AttributeError ('bytes'.encode) in native/plan/native.py
    data = model([helper.make_node("Relu", ["x"], ["y"], name="nodename")], [f32("x", [2])], [f32("y", [2])])
    bad = data.replace(b"nodename", b"\xf6odename")
    assert bad != data
    assert isinstance(run(bad, {"x": np.zeros(2, np.float32)}), mlrt.InvalidModel)


def test_opencl_gather_of_a_scalar():  # was IndexError in native/opencl/movement.py gather
    from opencl_check import opencl_device
    opencl_device()
    data = model([helper.make_node("Gather", ["x", "i"], ["y"])],
                 [f32("x", []), helper.make_tensor_value_info("i", TensorProto.INT64, [])], [f32("y", None)])
    try:
        got = ll.InferenceSession(data, providers=["OpenCLExecutionProvider", "CPUExecutionProvider"]).run(
            None, {"x": np.float32(2), "i": np.array(0)})
    except mlrt.MlrtError as exc:
        got = exc
    assert isinstance(got, mlrt.MlrtError)


@pytest.mark.parametrize("in_subgraph", [False, True])
def test_einsum_equation_of_control_bytes(in_subgraph):  # was a hang in onnx's shape inference of Einsum
    from mlrt.native import checker
    einsum = helper.make_node("Einsum", ["x"], ["y"], equation="\x01>")
    if in_subgraph:
        body = helper.make_graph([einsum], "body", [], [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
        c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
        data = model([helper.make_node("If", ["c"], ["z"], then_branch=body, else_branch=body)],
                     [helper.make_tensor_value_info("x", TensorProto.DOUBLE, []), c],
                     [helper.make_tensor_value_info("z", TensorProto.DOUBLE, None)])
        feed = {"x": np.float64(1), "c": np.array(True)}
    else:
        data = model([einsum], [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [])],
                     [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
        feed = {"x": np.float64(1)}
    m = __import__("onnx").load_from_string(data)
    assert checker._malformed_einsum(m.graph)  # so it never reaches onnx's inference
    assert isinstance(run(data, feed), mlrt.InvalidModel)


def test_a_check_that_never_returns_is_abandoned(monkeypatch):
    """Any other hang in onnx's checker: the child is killed at its deadline and the
    model goes on without the checker's advice."""
    import os
    import time

    from mlrt.native import checker
    monkeypatch.setattr(checker, "check_and_infer", lambda model, data=None: time.sleep(3600))
    monkeypatch.setattr(checker, "_deadline", lambda data: 0.5)
    data = model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])], [f32("y", [2])])
    m = __import__("onnx").load_from_string(data)
    forked = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forked.append(fork()) or forked[-1])
    for check in (checker._Checker().check, checker._Checker._check_forked):
        start = time.monotonic()
        assert check(m, data) == (None, [], None)
        assert time.monotonic() - start < 30
    assert len(forked) == 2
    for pid in forked:  # killed and reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_softmax13_of_a_scalar_along_axis_0(op):  # was IndexError in native/ops/_reduce.py split_axis
    data = model([helper.make_node(op, ["x"], ["y"], axis=0)], [f32("x", [])], [f32("y", None)], opset=13)
    assert isinstance(run(data, {"x": np.float32(3)}), mlrt.InvalidModel)
    old = model([helper.make_node(op, ["x"], ["y"], axis=0)], [f32("x", [])], [f32("y", None)], opset=11)
    got = run(old, {"x": np.float32(3)})  # before 13 the input is coerced to 2-D: a [1, 1] matrix
    assert not isinstance(got, Exception) and got[0].shape == ()


@pytest.mark.parametrize("provider", ["CPUExecutionProvider", "OpenCLExecutionProvider"])
def test_variadic_op_with_an_empty_input(provider):  # was AttributeError in the OpenCL recorder (None's dtype)
    if provider == "OpenCLExecutionProvider":
        from opencl_check import opencl_device
        opencl_device()
    for op in ("Sum", "Max", "Min", "Mean", "Add"):
        data = model([helper.make_node(op, ["", "x"] if op == "Add" else ["", "x", "x"], ["y"])], [f32("x", [3])],
                     [f32("y", None)], opset=13)
        try:
            got = ll.InferenceSession(data, providers=[provider, "CPUExecutionProvider"]).run(
                None, {"x": np.ones(3, np.float32)})
        except mlrt.MlrtError as exc:
            got = exc
        assert isinstance(got, mlrt.InvalidModel) and "input 0" in str(got), (op, got)


def test_tfidf_with_a_skip_count_of_two_to_the_31():  # was a hang: one pass per skip, 2^31 of them
    import time
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=2,
                            max_skip_count=2**31 - 1, ngram_counts=[0, 2], ngram_indexes=[0, 1, 2],
                            pool_int64s=[1, 2, 1, 2])
    data = model([node], [helper.make_tensor_value_info("x", TensorProto.INT64, [6])], [f32("y", None)], opset=9)
    start = time.monotonic()
    (y,) = run(data, {"x": np.array([1, 2, 1, 1, 2, 2])})
    assert time.monotonic() - start < 30
    # unigrams 1 and 2 three times each; the pair (1, 2) at skips 0..4 (starts 0, 2, 3 with
    # their next 2 at distances 1; 0 -> 4, 5; 2 -> 4, 5; 3 -> 4, 5 ...): every pair 1 .. 2 after it
    ones, twos = [0, 2, 3], [1, 4, 5]
    assert y.tolist() == [3, 3, sum(1 for a in ones for b in twos if b > a)]


@pytest.mark.parametrize("w_shape,x_channels", [([0, 3, 1, 1], 3), ([2, 0, 1, 1], 0)])
def test_conv_of_no_filters_or_empty_ones(w_shape, x_channels):  # was ZeroDivisionError packing the weights
    w = helper.make_tensor("w", TensorProto.FLOAT, w_shape, [])
    data = model([helper.make_node("Conv", ["x", "w"], ["y"])], [f32("x", [1, x_channels, 2, 2])], [f32("y", None)])
    m = __import__("onnx").load_from_string(data)
    m.graph.initializer.append(w)
    got = run(m.SerializeToString(), {"x": np.ones((1, x_channels, 2, 2), np.float32)})
    assert isinstance(got, mlrt.MlrtError) or got[0].shape == (1, w_shape[0], 2, 2) and not got[0].any()


@pytest.mark.parametrize("op,attr", [("QuantizeLinear", "output_dtype"), ("QuantizeLinear", "precision"),
                                     ("DequantizeLinear", "output_dtype")])
def test_quantize_with_an_unknown_element_type_attribute(op, attr):  # was KeyError in onnx's type table
    scale = helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])
    x = f32("x", [3]) if op == "QuantizeLinear" else helper.make_tensor_value_info("x", TensorProto.UINT8, [3])
    data = model([helper.make_node(op, ["x", "s"], ["y"], **{attr: -100})], [x],
                 [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], opset=25)
    m = __import__("onnx").load_from_string(data)
    m.graph.initializer.append(scale)
    feed = {"x": np.ones(3, np.float32 if op == "QuantizeLinear" else np.uint8)}
    got = run(m.SerializeToString(), feed)
    assert isinstance(got, mlrt.InvalidModel) and "not an ONNX element type" in str(got)


def test_tensor_scatter_of_strings_into_floats():  # was ValueError (a float of 'a') in its numpy path
    from mlrt.native import graph as graph_mod
    from mlrt.native.ops import make_op
    g = graph_mod.from_graph_proto(helper.make_graph(
        [helper.make_node("TensorScatter", ["past", "upd"], ["y"], axis=1)], "g",
        [f32("past", [1, 4]), f32("upd", [1, 2])], [f32("y", None)]), {"": 24})
    op = make_op(g.nodes[0], g)
    with pytest.raises(mlrt.InvalidArgument, match="must have past_cache's type"):
        op.run_host([np.zeros((1, 4), np.float32), np.array([["a", "b"]], object)], None)
