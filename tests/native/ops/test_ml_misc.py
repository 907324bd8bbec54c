"""Normalizer, Binarizer, Scaler, Imputer, ArrayFeatureExtractor, FeatureVectorizer
(ai.onnx.ml) against onnx.reference and onnxruntime.

Where the two disagree the op follows the spec and onnxruntime (float32 outputs for
Normalizer / Scaler / FeatureVectorizer, Normalizer MAX by the largest value) and the
test names the oracle it uses."""

import numpy as np
import pytest

import mlrt
from _ml_oracle import check_ml, ml_model
from oracle import EDGE_SIZES, EDGE_VALUES, run_mlrt

rng = np.random.default_rng(3)


def run(op, inputs, attrs, opset=1):
    return run_mlrt(ml_model(op, inputs, attrs, opset=opset), inputs)


# -- Normalizer ------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", EDGE_SIZES + (0,))
@pytest.mark.parametrize("norm", ["L1", "L2"])
def test_normalizer_sizes(rows, norm):
    x = rng.standard_normal((rows, 5)).astype(np.float32)
    check_ml("Normalizer", [x], {"norm": norm}, opset=1, oracle="both" if rows else "ort")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_normalizer_types(dtype):
    x = (rng.standard_normal((4, 6)) * 5).astype(dtype)
    # onnx.reference keeps a double input double (the spec and onnxruntime give float32)
    # and fails on integers
    check_ml("Normalizer", [x], {"norm": "L2"}, opset=1, oracle="ort")
    if dtype == np.float64:
        check_ml("Normalizer", [x], {"norm": "L2"}, opset=1, oracle="ref", ref_float32=True)


def test_normalizer_max_is_the_largest_value():
    # the spec's max(X) (onnxruntime); onnx.reference divides by the largest magnitude
    x = np.array([[1, -3, 2], [0, 0, 0], [-1, -2, -0.5], [-1, 0, -2], [np.nan, 1, 2]], np.float32)
    check_ml("Normalizer", [x], {"norm": "MAX"}, opset=1, oracle="ort")
    positive = np.abs(rng.standard_normal((13, 4))).astype(np.float32)
    check_ml("Normalizer", [positive], {"norm": "MAX"}, opset=1, oracle="both")


def test_normalizer_edge_values_and_one_row():
    x = EDGE_VALUES.reshape(1, -1)
    for norm in ("L1", "L2", "MAX"):
        check_ml("Normalizer", [x], {"norm": norm}, opset=1, oracle="ort")
        check_ml("Normalizer", [np.array([1.0, -2.0, 2.0], np.float32)], {"norm": norm}, opset=1, oracle="ort")


def test_normalizer_bad():
    with pytest.raises(mlrt.MlrtError, match="norm"):
        run("Normalizer", [np.ones((2, 2), np.float32)], {"norm": "L3"})
    with pytest.raises(mlrt.MlrtError):
        run("Normalizer", [np.ones((2, 2, 2), np.float32)], {"norm": "L1"})


# -- Binarizer -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_binarizer(dtype):
    x = (rng.standard_normal((3, 7)) * 4).astype(dtype)
    check_ml("Binarizer", [x], {"threshold": 0.5}, opset=1, oracle="ref")
    check_ml("Binarizer", [x[0, :0]], {}, opset=1, oracle="ref")
    check_ml("Binarizer", [np.array(2.5, dtype=dtype)], {"threshold": 1.0}, opset=1, oracle="ref")


def test_binarizer_edge_values():
    # NaN > t is false: 0 (onnx.reference; onnxruntime refuses NaN)
    check_ml("Binarizer", [EDGE_VALUES], {"threshold": -1e-40}, opset=1, oracle="ref")


# -- Scaler ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", [1, 2, 13, 127])
def test_scaler_per_feature(rows):
    x = rng.standard_normal((rows, 4)).astype(np.float32)
    check_ml("Scaler", [x], {"offset": [0.5, -1.0, 2.0, 0.0], "scale": [2.0, 0.5, -1.0, 3.0]}, opset=1,
             oracle="both")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_scaler_types(dtype):
    x = (rng.standard_normal((5, 3)) * 4).astype(dtype)
    check_ml("Scaler", [x], {"offset": [1.0], "scale": [0.25]}, opset=1, oracle="ort")


def test_scaler_broadcast_and_ranks():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    check_ml("Scaler", [x], {"offset": [1.0], "scale": [0.5, 1.0, 2.0, -1.0]}, opset=1, oracle="ref")
    check_ml("Scaler", [EDGE_VALUES], {"offset": [0.5], "scale": [2.0]}, opset=1, oracle="both")
    check_ml("Scaler", [np.zeros((0, 4), np.float32)], {"offset": [0.5], "scale": [2.0]}, opset=1, oracle="both")
    explicit = check_ml("Scaler", [x], {"offset": [0.0], "scale": [1.0]}, opset=1, oracle="ref")
    np.testing.assert_array_equal(run("Scaler", [x], {})[0], explicit[0])  # absent: offset 0, scale 1


def test_scaler_bad():
    with pytest.raises(mlrt.MlrtError, match="offset"):
        run("Scaler", [np.ones((2, 3), np.float32)], {"offset": [1.0, 2.0], "scale": [1.0]})


# -- Imputer ---------------------------------------------------------------------------------------------

def test_imputer_nan_and_values():
    x = rng.standard_normal((13, 3)).astype(np.float32)
    x[rng.random(x.shape) < 0.3] = np.nan
    check_ml("Imputer", [x], {"imputed_value_floats": [1.0, 2.0, 3.0], "replaced_value_float": np.nan},
             opset=1, oracle="both")
    x = np.round(x * 2) / 2
    check_ml("Imputer", [x], {"imputed_value_floats": [9.0], "replaced_value_float": 0.5}, opset=1, oracle="both")
    check_ml("Imputer", [x.astype(np.float64)], {"imputed_value_floats": [9.0], "replaced_value_float": 0.5},
             opset=1, oracle="ref")


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_imputer_integers(dtype):
    x = rng.integers(-2, 3, (9, 4)).astype(dtype)
    check_ml("Imputer", [x], {"imputed_value_int64s": [7, 8, 9, 10], "replaced_value_int64": 0}, opset=1,
             oracle="ref")


def test_imputer_any_rank():
    x = np.array([1, 5, 3, 3], np.float32)  # onnx.reference takes matrices only
    check_ml("Imputer", [x], {"imputed_value_floats": [9.0], "replaced_value_float": 3.0}, opset=1, oracle="ort")
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3) % 4
    check_ml("Imputer", [x], {"imputed_value_floats": [9.0], "replaced_value_float": 3.0}, opset=1, oracle="ort")


def test_imputer_bad():
    with pytest.raises(mlrt.MlrtError, match="imputed"):
        run("Imputer", [np.ones((2, 3), np.float32)], {"imputed_value_floats": [1.0, 2.0]})
    with pytest.raises(mlrt.MlrtError, match="imputed_value_floats"):
        run("Imputer", [np.ones((2, 3), np.float32)], {"imputed_value_int64s": [1]})


# -- ArrayFeatureExtractor ------------------------------------------------------------------------------------

@pytest.mark.parametrize("index", [[1, 3], [[2, 0]], [[1], [2]], 2, [0, 0, 3, 1]])
def test_array_feature_extractor(index):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    check_ml("ArrayFeatureExtractor", [x, np.array(index, np.int64)], opset=1, oracle="both")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_array_feature_extractor_types(dtype):
    x = (rng.standard_normal((5, 6)) * 9).astype(dtype)
    check_ml("ArrayFeatureExtractor", [x, np.array([5, 0], np.int64)], opset=1, oracle="both")
    check_ml("ArrayFeatureExtractor", [x[0], np.array([5, 0], np.int64)], opset=1, oracle="both")


def test_array_feature_extractor_strings_and_empty():
    s = np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object)
    check_ml("ArrayFeatureExtractor", [s, np.array([2, 1], np.int64)], opset=1, oracle="both")
    x = rng.standard_normal((3, 4)).astype(np.float32)
    check_ml("ArrayFeatureExtractor", [x, np.zeros(0, np.int64)], opset=1, oracle="ref")


def test_array_feature_extractor_bad_index():
    x = np.ones((2, 4), np.float32)
    for bad in ([4], [-1]):
        with pytest.raises(mlrt.MlrtError, match="range"):
            run("ArrayFeatureExtractor", [x, np.array(bad, np.int64)], {})
    with pytest.raises(mlrt.MlrtError):
        run("ArrayFeatureExtractor", [np.array(["a"], dtype=object), np.array([3], np.int64)], {})


# -- FeatureVectorizer --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [[3, 1, 2], [2, 3, 1], [0, 1, 4]])
def test_feature_vectorizer(dims):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 1)).astype(np.float32)
    c = rng.standard_normal((4, 2)).astype(np.float32)
    check_ml("FeatureVectorizer", [a, b, c], {"inputdimensions": dims}, opset=1, oracle="ort")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_feature_vectorizer_types_and_shapes(dtype):
    a = (rng.standard_normal((2, 3)) * 5).astype(dtype)
    check_ml("FeatureVectorizer", [a, a[:, :1]], {"inputdimensions": [3, 1]}, opset=1, oracle="ort")
    check_ml("FeatureVectorizer", [a[0], a[0, :1]], {"inputdimensions": [3, 2]}, opset=1, oracle="ort")  # 1-D: a row
    x3 = (rng.standard_normal((2, 2, 3)) * 5).astype(dtype)
    check_ml("FeatureVectorizer", [x3], {"inputdimensions": [6]}, opset=1, oracle="ort")


def test_feature_vectorizer_bad():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(mlrt.MlrtError, match="rows"):
        run("FeatureVectorizer", [a, np.ones((3, 1), np.float32)], {"inputdimensions": [3, 1]})
    with pytest.raises(mlrt.MlrtError, match="inputdimensions"):
        run("FeatureVectorizer", [a], {"inputdimensions": [3, 1]})


def test_planned_graph_with_default_domain_ops():
    # no host op: the whole graph runs as one native plan, ai.onnx.ml kernels included
    from onnx import TensorProto, helper

    from _ml_oracle import ML, run_ref
    nodes = [helper.make_node("Add", ["x", "x"], ["a"]),
             helper.make_node("Normalizer", ["a"], ["n"], domain=ML, norm="L2"),
             helper.make_node("Binarizer", ["n"], ["b"], domain=ML, threshold=0.1),
             helper.make_node("ArrayFeatureExtractor", ["b", "idx"], ["y"], domain=ML)]
    graph = helper.make_graph(
        nodes, "planned", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("idx", TensorProto.INT64, [2], [3, 0])])
    model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17),
                                                                  helper.make_opsetid(ML, 1)])
    x = rng.standard_normal((13, 4)).astype(np.float32)
    import mlrt.lowlevel as ml
    sess = ml.InferenceSession(model.SerializeToString())
    for _ in range(2):  # planned once, then reused
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], run_ref(model, [x])[0])
    assert sess._runnable.pieces[0].runnable.plans, "the graph should have run as a native plan"
