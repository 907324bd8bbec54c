"""Optional, OptionalHasElement, OptionalGetElement (and Identity passing optionals and
sequences through) against onnx.reference."""

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import mlrt
import mlrt.lowlevel as ml
from oracle import assert_same

F = TensorProto.FLOAT


def opt_tensor_info(name, elem=F, shape=(3,)):
    return helper.make_value_info(name, helper.make_optional_type_proto(helper.make_tensor_type_proto(elem, shape)))


def opt_seq_info(name, elem=F):
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None))
    return helper.make_value_info(name, helper.make_optional_type_proto(seq))


def model(nodes, inputs, outputs, opset=18):
    g = helper.make_graph(nodes, "optional_test", inputs, [helper.make_empty_tensor_value_info(n) for n in outputs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def same(got, expected, where="output"):
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for g, e in zip(got, expected):
            same(g, e, where)
    elif expected is None:
        assert got is None, f"{where}: got {got!r}, expected an empty optional"
    else:
        assert_same(got, expected, 0, 0, where)


def run_both(m, feeds):
    got = ml.InferenceSession(m.SerializeToString()).run(None, feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ReferenceEvaluator(m).run(None, feeds)
    for k, (g, e) in enumerate(zip(got, expected)):
        same(g, e, f"output {k}")
    return got


def run_mlrt(m, feeds):
    return ml.InferenceSession(m.SerializeToString()).run(None, feeds)


x3 = np.array([1.0, -2.0, 3.5], np.float32)


def test_optional_of_tensor():
    # onnx.reference's Optional wraps its value in a list, which its OptionalGetElement
    # returns as is; the spec (and onnxruntime) give back the tensor, checked here.
    nodes = [helper.make_node("Optional", ["x"], ["o"]), helper.make_node("OptionalHasElement", ["o"], ["h"]),
             helper.make_node("OptionalGetElement", ["o"], ["y"])]
    m = model(nodes, [helper.make_tensor_value_info("x", F, [3])], ["h", "y"])
    h, y = run_mlrt(m, {"x": x3})
    assert h.dtype == np.bool_ and h.shape == () and bool(h)
    assert_same(y, x3, 0, 0, "y")


def test_empty_optional():
    tp = helper.make_tensor_type_proto(F, [3])
    nodes = [helper.make_node("Optional", [], ["o"], type=tp), helper.make_node("OptionalHasElement", ["o"], ["h"])]
    got = run_mlrt(model(nodes, [], ["o", "h"]), {})
    assert got[0] is None and not bool(got[1])


def test_empty_optional_get_element_fails():
    tp = helper.make_tensor_type_proto(F, [3])
    nodes = [helper.make_node("Optional", [], ["o"], type=tp), helper.make_node("OptionalGetElement", ["o"], ["y"])]
    with pytest.raises(mlrt.MlrtError, match="empty"):
        run_mlrt(model(nodes, [], ["y"]), {})


@pytest.mark.parametrize("value", [x3, None])
def test_optional_tensor_input(value):
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["h"])]
    m = model(nodes, [opt_tensor_info("o")], ["h"])
    run_both(m, {"o": value})


@pytest.mark.parametrize("value", [[x3, x3[:1]], [], None])
def test_optional_sequence_input(value):
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["h"])]
    if value is not None:
        nodes += [helper.make_node("Identity", ["o"], ["same"]), helper.make_node("OptionalGetElement", ["o"], ["s"])]
    got = run_both(model(nodes, [opt_seq_info("o")], [n.output[0] for n in nodes]), {"o": value})
    assert bool(got[0]) == (value is not None)


def test_identity_on_empty_optional():
    m = model([helper.make_node("Identity", ["o"], ["p"])], [opt_seq_info("o")], ["p"])
    assert run_mlrt(m, {"o": None}) == [None]


def test_has_element_without_input():
    m = model([helper.make_node("OptionalHasElement", [""], ["h"])], [], ["h"])
    assert not bool(run_mlrt(m, {})[0])
    m = model([helper.make_node("OptionalHasElement", [], ["h"])], [], ["h"])
    assert not bool(run_mlrt(m, {})[0])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.uint8, np.float64])
def test_get_element_plain_tensor(dtype):
    x = np.arange(6).reshape(2, 3).astype(dtype)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [helper.make_node("OptionalGetElement", ["x"], ["y"]), helper.make_node("OptionalHasElement", ["x"], ["h"])]
    run_both(model(nodes, [helper.make_tensor_value_info("x", elem, [2, 3])], ["y", "h"]), {"x": x})


def test_optional_of_sequence_through_identity():
    seq = [x3, np.zeros((0,), np.float32)]
    nodes = [helper.make_node("Optional", ["s"], ["o"]), helper.make_node("Identity", ["o"], ["p"]),
             helper.make_node("OptionalGetElement", ["p"], ["t"])]
    m = model(nodes, [helper.make_tensor_sequence_value_info("s", F, None)], ["t"])
    same(run_mlrt(m, {"s": seq})[0], seq)


def test_identity_on_sequence():
    seq = [x3, np.ones((2, 2), np.float32)]
    m = model([helper.make_node("Identity", ["s"], ["t"])], [helper.make_tensor_sequence_value_info("s", F, None)],
              ["t"])
    run_both(m, {"s": seq})
