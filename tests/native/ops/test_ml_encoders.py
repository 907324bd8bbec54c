"""LabelEncoder, CategoryMapper, OneHotEncoder, ZipMap, DictVectorizer (ai.onnx.ml host
operators) against onnx.reference and onnxruntime.

onnx.reference has no CategoryMapper and no ZipMap and no LabelEncoder opset 1: those
use onnxruntime.  Where the two runtimes disagree the test says which reading mlrt
follows (the spec's, in the op's docstring)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlrt
from _ml_oracle import ML, ML_OPSET, check_ml, ml_model, run_ref, same
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
    from mlrt.native import load as loading
    from mlrt.native._lib import ThreadPool
    from mlrt.native.plan.cpu import CPUPartition
    program = CPUPartition(loading.load(model.SerializeToString()), ThreadPool(1))
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


# -- strings in native plans (kernels/ml_string.c) -------------------------------------------------
#
# A string input read by OneHotEncoder, LabelEncoder or CategoryMapper (after data movement
# or not) is bound to the plan as UTF-32 (mlrt_strings); strings the layout cannot hold
# exactly (a str ending in U+0000, bytes elements) run node by node in Python instead.
# Every case runs three times: the run that plans, then the session's quick runs.

WORDS = ["", "a", "b", "zz", "é", "e\u0301", "😀", "a\0b", "日本語", "x" * 300, "paris", "Paris"]


def _planned_steps(sess) -> list:
    """The op types of the native plans the session's partitions hold."""
    runnable = sess._runnable.pieces[0].runnable
    return [s.op.op_type for p in runnable.plans.values() if hasattr(p, "steps") for s in p.steps]


def _run_thrice(model, feeds: dict):
    import mlrt.lowlevel as ml
    sess = ml.InferenceSession(model.SerializeToString())
    runs = [sess.run(None, feeds) for _ in range(3)]
    for r in runs[1:]:
        for g, w in zip(r, runs[0]):
            same(g, w, 0, 0, "a quick run")
    return sess, runs[0]


def _string_model(nodes, inputs, outputs, opset=ML_OPSET):
    graph = helper.make_graph(nodes, "strings", inputs, outputs)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17),
                                                                  helper.make_opsetid(ML, opset)])


@pytest.mark.parametrize("n", [0, 1, 2, 13, 127])
def test_string_lookups_in_a_plan(n):
    """OneHotEncoder, LabelEncoder (opsets 1, 2, 4) and CategoryMapper on strings of
    every width (none, accents, combining marks, beyond the BMP, an embedded NUL, 300
    characters), fed as str objects and as numpy 'U', against onnx.reference (and a
    dict for CategoryMapper), run in one native plan."""
    words = rng.choice(np.array(WORDS + ["unseen", "A"], dtype=object), size=(n, 1))
    keys = WORDS[1:] + ["a"]  # a repeated key: the last wins (not for OneHotEncoder, whose columns it would be)
    ints = list(range(10, 10 + len(keys)))
    nodes = [helper.make_node("OneHotEncoder", ["x"], ["onehot"], domain=ML, cats_strings=keys[:-1], zeros=1),
             helper.make_node("LabelEncoder", ["x"], ["ints"], domain=ML, keys_strings=keys, values_int64s=ints),
             helper.make_node("LabelEncoder", ["x"], ["floats"], domain=ML, keys_strings=keys,
                              values_floats=[i / 4 for i in ints], default_float=-1.5),
             helper.make_node("CategoryMapper", ["x"], ["cats"], domain=ML, cats_strings=keys, cats_int64s=ints,
                              default_int64=-7)]
    outs = [helper.make_tensor_value_info(o, t, None) for o, t in
            (("onehot", TensorProto.FLOAT), ("ints", TensorProto.INT64), ("floats", TensorProto.FLOAT),
             ("cats", TensorProto.INT64))]
    model = _string_model(nodes, [helper.make_tensor_value_info("x", TensorProto.STRING, [None, 1])], outs)
    table = dict(zip(keys, ints))
    want_cats = np.array([table.get(w, -7) for w in words.reshape(-1)], np.int64).reshape(words.shape)
    for x in (words, words.astype(np.str_) if n else words):
        sess, got = _run_thrice(model, {"x": x})
        assert {"OneHotEncoder", "LabelEncoder", "CategoryMapper"} <= set(_planned_steps(sess))
        no_mapper = _string_model(nodes[:3], model.graph.input, outs[:3])
        for g, w in zip(got[:3], run_ref(no_mapper, [words])):
            same(g, w, 0, 0, "against onnx.reference")
        same(got[3], want_cats, 0, 0, "CategoryMapper")
    opset1 = _string_model([helper.make_node("LabelEncoder", ["x"], ["ints"], domain=ML, classes_strings=keys,
                                             default_int64=-2)], model.graph.input, outs[1:2], opset=1)
    sess, got = _run_thrice(opset1, {"x": words})
    index = {k: i for i, k in enumerate(keys)}
    same(got[0], np.array([index.get(w, -2) for w in words.reshape(-1)], np.int64).reshape(words.shape), 0, 0, "opset 1")


def test_strings_the_plan_cannot_hold_run_on_the_host():
    """A str ending in U+0000 (which the UTF-32 layout cannot tell from its end) and bytes
    elements (decoded as UTF-8 on the host): the same results, node by node."""
    keys = ["a", "a\0", "b"]
    model = _string_model([helper.make_node("OneHotEncoder", ["x"], ["y"], domain=ML, cats_strings=keys)],
                          [helper.make_tensor_value_info("x", TensorProto.STRING, [None])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    sess, got = _run_thrice(model, {"x": np.array(["a\0", "a", "b", "c"], dtype=object)})
    np.testing.assert_array_equal(got[0], np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0]], np.float32))
    keys = ["a", "b"]
    model = _string_model([helper.make_node("OneHotEncoder", ["x"], ["y"], domain=ML, cats_strings=keys)],
                          model.graph.input, model.graph.output)
    for x in (np.array(["b", "a\0", "a"], dtype=object), np.array([b"b", "a", b"a"], dtype=object)):
        sess, got = _run_thrice(model, {"x": x})
        want = [[0, 1], [0, 0], [1, 0]] if "a\0" in list(x) else [[0, 1], [1, 0], [1, 0]]
        np.testing.assert_array_equal(got[0], np.array(want, np.float32))
    sess, got = _run_thrice(model, {"x": np.array(["b", "a"], dtype=object)})  # the plan, once the feeds allow
    np.testing.assert_array_equal(got[0], np.array([[0, 1], [1, 0]], np.float32))
    assert "OneHotEncoder" in _planned_steps(sess)


def test_string_columns_moved_ahead_of_the_lookups():
    """The columns skl2onnx picks out of one [N, 3] string input (Gather, Slice, then
    Reshape / Squeeze / Identity) are moved on the strings' numbers while planning: the
    lookups read the input itself, in one native plan; against onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    x = np.array([["red", "paris", "pro"], ["blue", "lima", "free"], ["green", "oslo", "pro"],
                  ["red", "cairo", "basic"]], dtype=object)
    i64 = lambda name, *v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Gather", ["x", "one"], ["city"], axis=1),
             helper.make_node("OneHotEncoder", ["city"], ["city_hot"], domain=ML,
                              cats_strings=["lima", "oslo", "paris"]),
             helper.make_node("Slice", ["x", "two", "three", "one"], ["plan"]),
             helper.make_node("Reshape", ["plan", "flat"], ["plan_flat"]),
             helper.make_node("LabelEncoder", ["plan_flat"], ["plan_id"], domain=ML, keys_strings=["free", "pro"],
                              values_int64s=[0, 2], default_int64=1),
             helper.make_node("Gather", ["x", "zero"], ["color"], axis=1),
             helper.make_node("Squeeze", ["color", "one"], ["color_1d"]),
             helper.make_node("Identity", ["color_1d"], ["color_id"]),
             helper.make_node("CategoryMapper", ["color_id"], ["color_cat"], domain=ML,
                              cats_strings=["red", "green"], cats_int64s=[1, 2])]
    graph = helper.make_graph(nodes, "columns", [helper.make_tensor_value_info("x", TensorProto.STRING, [None, 3])],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               (("city_hot", TensorProto.FLOAT), ("plan_id", TensorProto.INT64),
                                ("color_cat", TensorProto.INT64))],
                              [i64("one", 1), i64("two", 2), i64("three", 3), i64("zero", 0), i64("flat", -1)])
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17),
                                                                   helper.make_opsetid(ML, 3)])
    for rows in (x, x[:1], x[:0]):
        sess, got = _run_thrice(model, {"x": rows})
        want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None,
                                                                                                      {"x": rows})
        for g, w in zip(got, want):
            same(g, w, 0, 0, f"{len(rows)} rows")
        steps = _planned_steps(sess)
        assert {"OneHotEncoder", "LabelEncoder", "CategoryMapper"} <= set(steps)
        assert not {"Gather", "Slice", "Reshape", "Squeeze", "Identity"} & set(steps)


def test_strings_not_for_the_lookups_run_node_by_node():
    """Strings joined from two inputs, and a moved string that is itself an output: node
    by node, with the same results as onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    a = np.array([["x"], ["y"]], dtype=object)
    b = np.array([["y"], ["z"]], dtype=object)
    nodes = [helper.make_node("Concat", ["a", "b"], ["ab"], axis=1),
             helper.make_node("OneHotEncoder", ["ab"], ["hot"], domain=ML, cats_strings=["x", "y", "z"]),
             helper.make_node("Identity", ["a"], ["a_out"])]
    graph = helper.make_graph(nodes, "fallback", [helper.make_tensor_value_info(n, TensorProto.STRING, [None, 1])
                                                  for n in "ab"],
                              [helper.make_tensor_value_info("hot", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("a_out", TensorProto.STRING, None)])
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17),
                                                                   helper.make_opsetid(ML, 3)])
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})
    sess, got = _run_thrice(model, {"a": a, "b": b})
    for g, w in zip(got, want):
        same(g, w, 0, 0, "node by node")
