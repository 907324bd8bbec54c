"""Shape, Size and Constant: values computed at plan time, no kernel."""

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from oracle import check_node, run_mlrt

rng = np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3, 4), (1, 0, 5, 1)])
def test_shape_and_size(shape):
    x = rng.standard_normal(shape).astype(np.float32)
    check_node("Shape", [x])
    check_node("Size", [x])
    check_node("Shape", [x.astype(np.int8)], opset=13)


@pytest.mark.parametrize("start,end", [(0, None), (1, None), (-1, None), (0, -1), (1, 2), (-10, 10), (3, 1), (5, 7)])
def test_shape_start_end(start, end):
    attrs = {"start": start} if end is None else {"start": start, "end": end}
    check_node("Shape", [rng.standard_normal((2, 3, 4, 5)).astype(np.float32)], attrs)


def test_shape_feeds_reshape():
    """Shape -> Reshape works on plan-time values (no run-time data needed)."""
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((6, 4)).astype(np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["y", "s"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, x.shape),
                                           helper.make_tensor_value_info("y", 1, y.shape)],
                              [helper.make_tensor_value_info("z", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    np.testing.assert_array_equal(run_mlrt(model, [x, y])[0], y.reshape(x.shape))


def constant_model(**attr):
    node = helper.make_node("Constant", [], ["y"], **attr)
    graph = helper.make_graph([node], "c", [], [helper.make_empty_tensor_value_info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize("attr,expected", [
    ({"value": numpy_helper.from_array(np.arange(6, dtype=np.int32).reshape(2, 3))}, np.arange(6, dtype=np.int32).reshape(2, 3)),
    ({"value": numpy_helper.from_array(np.array(np.nan, np.float16))}, np.array(np.nan, np.float16)),
    ({"value_float": 1.5}, np.array(1.5, np.float32)),
    ({"value_floats": [1.0, -0.0, np.inf]}, np.array([1.0, -0.0, np.inf], np.float32)),
    ({"value_int": -7}, np.array(-7, np.int64)),
    ({"value_ints": [1, 2, 3]}, np.array([1, 2, 3], np.int64)),
    ({"value_string": "hi"}, np.array("hi", dtype=object)),
    ({"value_strings": ["a", "bc"]}, np.array(["a", "bc"], dtype=object)),
])
def test_constant(attr, expected):
    got = run_mlrt(constant_model(**attr), [])[0]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_constant_sparse():
    values = numpy_helper.from_array(np.array([5.0, 6.0], np.float32), "v")
    indices = numpy_helper.from_array(np.array([1, 7], np.int64), "i")
    sparse = helper.make_sparse_tensor(values, indices, [2, 4])
    got = run_mlrt(constant_model(sparse_value=sparse), [])[0]
    expected = np.zeros((2, 4), np.float32)
    expected.flat[[1, 7]] = [5.0, 6.0]
    np.testing.assert_array_equal(got, expected)


def test_constant_needs_one_value():
    node = helper.make_node("Constant", [], ["y"], value_int=1, value_float=2.0)
    graph = helper.make_graph([node], "c", [], [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(model, [])
