"""LabelEncoder, CategoryMapper, OneHotEncoder, ZipMap, DictVectorizer (ai.onnx.ml host
operators) against onnx.reference and onnxruntime.

onnx.reference has no CategoryMapper and no ZipMap and no LabelEncoder opset 1: those
use onnxruntime.  Where the two runtimes disagree the test says which reading mlrt
follows (the spec's, in the op's docstring)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
from _ml_oracle import ML, check_ml, ml_model, run_ref, same
from oracle import run_mlrt

rng = np.random.default_rng(5)
S = np.array([["a", "b", "zz"], ["c", "a", "q"]], dtype=object)
I = np.array([[0, 2, 7], [-1, 1, 1]], np.int64)
F = np.array([[0.5, np.nan, 2.0], [-1.0, 1.5, 3.0]], np.float32)


def run(op, inputs, attrs, opset, **kw):
    return run_mlrt(ml_model(op, inputs, attrs, opset=opset, **kw), inputs)


# -- LabelEncoder --------------------------------------------------------------------------------

def test_label_encoder_opset_1():
    check_ml("LabelEncoder", [S], {"classes_strings": ["a", "b", "c"], "default_int64": 9}, opset=1, oracle="ort")
    check_ml("LabelEncoder", [I], {"classes_strings": ["a", "b", "c"], "default_string": "none"}, opset=1,
             oracle="ort")
    check_ml("LabelEncoder", [S[:, :0]], {"classes_strings": ["a"]}, opset=1, oracle="ort")


@pytest.mark.parametrize("opset", [2, 4])
@pytest.mark.parametrize("x, attrs", [
    (S, {"keys_strings": ["a", "b", "c"], "values_int64s": [5, 6, 7]}),
    (S, {"keys_strings": ["a", "b", "c"], "values_floats": [0.5, 1.5, 2.5], "default_float": 9.0}),
    (S, {"keys_strings": ["a", "c"], "values_strings": ["A", "C"], "default_string": "?"}),
    (I, {"keys_int64s": [0, 1, 2], "values_floats": [0.5, 0.25, 0.125]}),
    (I, {"keys_int64s": [7, -1], "values_strings": ["seven", "minus"]}),
    (I, {"keys_int64s": [7, -1, 2], "values_int64s": [70, -10, 20], "default_int64": 0}),
    (np.round(F * 2) / 2, {"keys_floats": [0.5, 2.0, -1.0], "values_int64s": [1, 2, 3]}),
])
def test_label_encoder_keys_values(opset, x, attrs):
    check_ml("LabelEncoder", [x], attrs, opset=opset, oracle="both")


def test_label_encoder_tensor_attributes():
    keys = numpy_helper.from_array(np.array([0, 1, 2], np.int32))
    values = numpy_helper.from_array(np.array([1.5, 2.5, 3.5], np.float64))
    default = numpy_helper.from_array(np.array([-7.0]))
    x = I.astype(np.int32)
    check_ml("LabelEncoder", [x], {"keys_tensor": keys, "values_tensor": values, "default_tensor": default},
             opset=4, oracle="ref")
    # no default_tensor: -0.0 for float values (the spec; onnx.reference needs one)
    minus_zero = numpy_helper.from_array(np.array([-0.0]))
    np.testing.assert_array_equal(
        run("LabelEncoder", [x], {"keys_tensor": keys, "values_tensor": values}, opset=4)[0],
        run("LabelEncoder", [x], {"keys_tensor": keys, "values_tensor": values, "default_tensor": minus_zero},
            opset=4)[0])
    strings = numpy_helper.from_array(np.array([b"x", b"y", b"z"], dtype=object))
    int_default = numpy_helper.from_array(np.array([-1], np.int32))
    check_ml("LabelEncoder", [S], {"keys_strings": ["a", "b", "c"], "values_tensor": keys,
                                   "default_tensor": int_default}, opset=4, oracle="ref")
    str_default = numpy_helper.from_array(np.array([b"?"], dtype=object))
    check_ml("LabelEncoder", [x], {"keys_tensor": keys, "values_tensor": strings, "default_tensor": str_default},
             opset=4, oracle="ref")


def test_label_encoder_nan_keys_from_opset_4():
    attrs = {"keys_floats": [0.5, 2.0, float("nan")], "values_strings": ["x", "y", "n"]}
    check_ml("LabelEncoder", [F], attrs, opset=4, oracle="ort")  # NaN matches NaN
    check_ml("LabelEncoder", [F], attrs, opset=2, oracle="both")  # ... not before


def test_label_encoder_repeated_key_keeps_the_last():
    # the spec and onnx.reference; onnxruntime keeps the first
    check_ml("LabelEncoder", [I], {"keys_int64s": [0, 1, 0], "values_int64s": [1, 2, 3]}, opset=4, oracle="ref")
    check_ml("LabelEncoder", [S], {"keys_strings": ["a", "a"], "values_int64s": [1, 2]}, opset=4, oracle="ref")


def test_label_encoder_bad():
    with pytest.raises(mlrt.MlrtError, match="keys"):
        run("LabelEncoder", [S], {"keys_strings": ["a"], "values_int64s": [1, 2]}, opset=2)
    with pytest.raises(mlrt.MlrtError, match="exactly one"):
        run("LabelEncoder", [S], {"keys_strings": ["a"], "keys_int64s": [1], "values_int64s": [1]}, opset=2)
    with pytest.raises(mlrt.MlrtError, match="keys are"):
        run("LabelEncoder", [I], {"keys_strings": ["a"], "values_int64s": [1]}, opset=2)


# -- CategoryMapper ----------------------------------------------------------------------------------

def test_category_mapper():
    attrs = {"cats_strings": ["a", "b", "c"], "cats_int64s": [5, 6, 7]}
    check_ml("CategoryMapper", [S], {**attrs, "default_int64": -3}, opset=1, oracle="ort")
    check_ml("CategoryMapper", [np.array([5, 9, 7, 6], np.int64)], {**attrs, "default_string": "?"}, opset=1,
             oracle="ort")
    check_ml("CategoryMapper", [np.array([5, 9], np.int64)], attrs, opset=1, oracle="ort")  # default _Unused
    with pytest.raises(mlrt.MlrtError, match="cats_int64s"):
        run("CategoryMapper", [S], {"cats_strings": ["a"], "cats_int64s": [1, 2]}, opset=1)


# -- OneHotEncoder ---------------------------------------------------------------------------------------

def test_one_hot_encoder():
    check_ml("OneHotEncoder", [S], {"cats_strings": ["a", "b", "c"]}, opset=1, oracle="both")
    check_ml("OneHotEncoder", [I], {"cats_int64s": [1, 0, 7]}, opset=1, oracle="both")
    check_ml("OneHotEncoder", [I[0]], {"cats_int64s": [1, 0, 7]}, opset=1, oracle="both")
    check_ml("OneHotEncoder", [I.astype(np.int32)], {"cats_int64s": [1, 0, 7]}, opset=1, oracle="ref")
    check_ml("OneHotEncoder", [I[:, :0]], {"cats_int64s": [1, 0, 7]}, opset=1, oracle="ort")


def test_one_hot_encoder_floats_are_truncated():
    # "cast to integers" (the spec, onnxruntime); onnx.reference looks 2.7 up as it is
    x = np.array([[1.0, 2.7], [7.0, -0.5], [np.nan, np.inf]], np.float32)
    check_ml("OneHotEncoder", [x], {"cats_int64s": [1, 0, 7, 2]}, opset=1, oracle="ort")
    check_ml("OneHotEncoder", [x.astype(np.float64)], {"cats_int64s": [1, 0, 7, 2]}, opset=1, oracle="ort")


def test_one_hot_encoder_unknown_with_zeros_0():
    check_ml("OneHotEncoder", [I], {"cats_int64s": [1, 0, 7, 2, -1], "zeros": 0}, opset=1, oracle="both")
    with pytest.raises(mlrt.MlrtError, match="no category"):
        run("OneHotEncoder", [I], {"cats_int64s": [1, 0], "zeros": 0}, opset=1)


# -- ZipMap ------------------------------------------------------------------------------------------------

def _seq_of_maps(key_type):
    value = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    return helper.make_value_info("y0", helper.make_sequence_type_proto(helper.make_map_type_proto(key_type, value)))


@pytest.mark.parametrize("rows", [0, 1, 3, 13])
def test_zipmap(rows):
    z = rng.random((rows, 3)).astype(np.float32)
    got = check_ml("ZipMap", [z], {"classlabels_strings": ["x", "y", "z"]}, opset=1, oracle="ort",
                   output_types=[_seq_of_maps(TensorProto.STRING)])
    assert isinstance(got[0], list) and len(got[0]) == rows
    check_ml("ZipMap", [z], {"classlabels_int64s": [3, 8, 1]}, opset=1, oracle="ort",
             output_types=[_seq_of_maps(TensorProto.INT64)])


def test_zipmap_bad():
    with pytest.raises(mlrt.MlrtError, match="column"):
        run("ZipMap", [np.ones((2, 3), np.float32)], {"classlabels_int64s": [1, 2]}, opset=1,
            output_types=[_seq_of_maps(TensorProto.INT64)])


# -- DictVectorizer ------------------------------------------------------------------------------------------

def _map_model(key_type, value_type, attrs):
    vt = helper.make_tensor_type_proto(value_type, None)
    x = helper.make_value_info("x0", helper.make_map_type_proto(key_type, vt))
    node = helper.make_node("DictVectorizer", ["x0"], ["y0"], domain=ML, **attrs)
    graph = helper.make_graph([node], "dv", [x], [helper.make_empty_tensor_value_info("y0")])
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17),
                                                                  helper.make_opsetid(ML, 1)])


def _run_program(model, feeds):
    # map inputs do not pass InferenceSession's feed checks yet: run the compiled graph
    from mlrt.native import graph as graph_mod
    from mlrt.native._lib import ThreadPool
    from mlrt.native.plan.cpu import CPUPartition
    program = CPUPartition(graph_mod.load(model.SerializeToString()), ThreadPool(1))
    return [program.run(feeds)[o.name] for o in model.graph.output]


@pytest.mark.parametrize("key_type, value_type, x, attrs", [
    (TensorProto.STRING, TensorProto.FLOAT, {"a": np.float32(4.0), "c": np.float32(8.5)},
     {"string_vocabulary": ["a", "c", "b", "z"]}),
    (TensorProto.STRING, TensorProto.INT64, {"b": np.int64(3)}, {"string_vocabulary": ["a", "b"]}),
    (TensorProto.INT64, TensorProto.DOUBLE, {7: np.float64(1.5), 2: np.float64(-2.0)}, {"int64_vocabulary": [2, 5, 7]}),
])
def test_dict_vectorizer(key_type, value_type, x, attrs):
    model = _map_model(key_type, value_type, attrs)
    got = _run_program(model, {"x0": x})
    assert got[0].dtype == helper.tensor_dtype_to_np_dtype(value_type)
    # onnx.reference builds its result from Python numbers (float64 for float maps)
    expected = [e.astype(got[0].dtype) for e in run_ref(model, [x])]
    same(got, expected, 0, 0, "DictVectorizer vs run_ref")


def test_dict_vectorizer_sequence_and_bad_key():
    model = _map_model(TensorProto.STRING, TensorProto.FLOAT, {"string_vocabulary": ["a", "b"]})
    rows = [{"a": np.float32(1.0)}, {"b": np.float32(2.0), "a": np.float32(3.0)}]
    got = _run_program(model, {"x0": rows})
    same(got, [e.astype(np.float32) for e in run_ref(model, [rows])], 0, 0, "DictVectorizer vs run_ref")
    with pytest.raises(mlrt.MlrtError, match="vocabulary"):
        _run_program(model, {"x0": {"q": np.float32(1.0)}})
