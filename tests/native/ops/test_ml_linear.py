"""LinearRegressor, LinearClassifier, SVMRegressor, SVMClassifier (ai.onnx.ml) against
onnx.reference and onnxruntime.

onnx.reference knows only post_transform NONE for the regressors, writes the
one-score binary layouts differently and couples SVM probabilities another way; those
cases use onnxruntime (see the ops' docstrings).  PROBIT compares with a looser
atol: onnxruntime evaluates its erfinv approximation in float32."""

import numpy as np
import pytest

import mlrt
from _ml_oracle import check_ml, ml_model
from oracle import EDGE_SIZES, run_mlrt

rng = np.random.default_rng(11)
TRANSFORMS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]


def _atol(transform):
    return 1e-3 if transform == "PROBIT" else None


def run(op, inputs, attrs, n_outputs=1):
    return run_mlrt(ml_model(op, inputs, attrs, n_outputs, opset=1), inputs)


# -- LinearRegressor -----------------------------------------------------------------------

@pytest.mark.parametrize("rows", EDGE_SIZES)
def test_linear_regressor_sizes(rows):
    x = rng.standard_normal((rows, 5)).astype(np.float32)
    attrs = {"coefficients": rng.standard_normal(10).tolist(), "intercepts": [0.5, -0.25], "targets": 2}
    check_ml("LinearRegressor", [x], attrs, opset=1, oracle="both")


@pytest.mark.parametrize("transform", TRANSFORMS[1:])
def test_linear_regressor_post_transforms(transform):
    x = rng.standard_normal((7, 4)).astype(np.float32)
    attrs = {"coefficients": rng.standard_normal(12).tolist(), "intercepts": [0.1, 0.2, 0.3], "targets": 3,
             "post_transform": transform}
    check_ml("LinearRegressor", [x], attrs, opset=1, oracle="ort", atol=_atol(transform))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_linear_regressor_types(dtype):
    x = (rng.standard_normal((6, 3)) * 4).astype(dtype)
    attrs = {"coefficients": [0.5, -1.0, 2.0], "intercepts": [0.5]}
    # onnxruntime has no double kernel; onnx.reference computes in X's type (float32 per spec)
    check_ml("LinearRegressor", [x.astype(np.float32)], attrs, opset=1, oracle="both")
    got = run("LinearRegressor", [x], attrs)[0]
    want = run("LinearRegressor", [x.astype(np.float64)], attrs)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    check_ml("LinearRegressor", [x.astype(np.float64)], attrs, opset=1, oracle="ref", ref_float32=True)


def test_linear_regressor_one_row_and_empty():
    attrs = {"coefficients": [0.5, -1.0, 2.0], "intercepts": [1.0]}
    check_ml("LinearRegressor", [np.array([1.0, 2.0, 3.0], np.float32)], attrs, opset=1, oracle="ort")
    check_ml("LinearRegressor", [np.zeros((0, 3), np.float32)], attrs, opset=1, oracle="ort")


def test_linear_regressor_bad():
    with pytest.raises(mlrt.MlrtError, match="features"):
        run("LinearRegressor", [np.ones((2, 4), np.float32)], {"coefficients": [1.0, 2.0, 3.0]})
    with pytest.raises(mlrt.MlrtError, match="targets"):
        run("LinearRegressor", [np.ones((2, 3), np.float32)], {"coefficients": [1.0, 2.0, 3.0], "targets": 2})


# -- LinearClassifier ------------------------------------------------------------------------------

@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("labels", [[4, 5, 6], ["a", "b", "c"]])
def test_linear_classifier_multiclass(transform, labels):
    x = rng.standard_normal((9, 4)).astype(np.float32)
    key = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_ints"
    attrs = {"coefficients": rng.standard_normal(12).tolist(), "intercepts": [0.1, 0.2, 0.3], key: labels,
             "post_transform": transform}
    # the label is the best raw score (onnxruntime); onnx.reference takes it after PROBIT
    check_ml("LinearClassifier", [x], attrs, n_outputs=2, opset=1,
             oracle="ort" if transform == "PROBIT" else "both", atol=_atol(transform))


@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC", "SOFTMAX"])
@pytest.mark.parametrize("labels", [[0, 1], ["no", "yes"]])
def test_linear_classifier_one_score(transform, labels):
    x = rng.standard_normal((13, 4)).astype(np.float32)
    key = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_ints"
    attrs = {"coefficients": rng.standard_normal(4).tolist(), "intercepts": [0.1], key: labels,
             "post_transform": transform}
    check_ml("LinearClassifier", [x], attrs, n_outputs=2, opset=1, oracle="ort")


def test_linear_classifier_two_rows_like_scikit_learn():
    w = rng.standard_normal(4)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    attrs = {"coefficients": np.concatenate([-w, w]).tolist(), "intercepts": [-0.3, 0.3],
             "classlabels_ints": [0, 1], "post_transform": "LOGISTIC"}
    check_ml("LinearClassifier", [x], attrs, n_outputs=2, opset=1, oracle="both")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_linear_classifier_types(dtype):
    x = (rng.standard_normal((6, 3)) * 3).astype(dtype)
    attrs = {"coefficients": rng.standard_normal(9).tolist(), "intercepts": [0.0, 0.1, 0.2],
             "classlabels_ints": [1, 2, 3], "post_transform": "SOFTMAX"}
    check_ml("LinearClassifier", [x], attrs, n_outputs=2, opset=1, oracle="ort")


def test_linear_classifier_bad():
    with pytest.raises(mlrt.MlrtError, match="labels"):
        run("LinearClassifier", [np.ones((2, 2), np.float32)],
            {"coefficients": [1.0, 2.0, 3.0, 4.0], "intercepts": [0.0, 0.0]}, n_outputs=2)
    with pytest.raises(mlrt.MlrtError, match="features"):
        run("LinearClassifier", [np.ones((2, 3), np.float32)],
            {"coefficients": [1.0, 2.0, 3.0, 4.0], "intercepts": [0.0, 0.0], "classlabels_ints": [0, 1]}, n_outputs=2)


# -- SVMRegressor -------------------------------------------------------------------------------------

KERNELS = [("LINEAR", None), ("POLY", [0.3, 1.0, 3]), ("RBF", [0.2, 0.0, 0]), ("SIGMOID", [0.1, 0.5, 0])]


@pytest.mark.parametrize("kernel, params", KERNELS)
@pytest.mark.parametrize("one_class", [0, 1])
def test_svm_regressor(kernel, params, one_class):
    x = rng.standard_normal((13, 3)).astype(np.float32)
    n = 5
    attrs = {"kernel_type": kernel, "kernel_params": params or [0.0, 0.0, 0.0], "n_supports": n, "one_class": one_class,
             "support_vectors": rng.standard_normal(n * 3).tolist(), "coefficients": rng.standard_normal(n).tolist(),
             "rho": [0.25]}
    check_ml("SVMRegressor", [x], attrs, opset=1, oracle="both")


def test_svm_regressor_linear_mode_and_types():
    x = rng.standard_normal((4, 3)).astype(np.float64)
    attrs = {"coefficients": [0.5, -1.0, 2.0], "rho": [1.5], "kernel_type": "RBF",  # no support vectors
             "kernel_params": [0.1, 0.0, 0]}
    check_ml("SVMRegressor", [x.astype(np.float32)], attrs, opset=1, oracle="both")
    # onnxruntime: float32 only; onnx.reference: in X's type (the spec says float32)
    check_ml("SVMRegressor", [x], attrs, opset=1, oracle="ref", ref_float32=True)
    ints = (x * 3).astype(np.int64)
    np.testing.assert_allclose(run("SVMRegressor", [ints], attrs)[0],
                               run("SVMRegressor", [ints.astype(np.float64)], attrs)[0], rtol=1e-6)


def test_svm_regressor_bad():
    attrs = {"n_supports": 2, "support_vectors": [1.0, 2.0, 3.0, 4.0], "coefficients": [1.0, 1.0], "rho": [0.0]}
    with pytest.raises(mlrt.MlrtError, match="features"):
        run("SVMRegressor", [np.ones((2, 3), np.float32)], attrs)
    with pytest.raises(mlrt.MlrtError, match="kernel_type"):
        run("SVMRegressor", [np.ones((2, 2), np.float32)], {**attrs, "kernel_type": "CUBIC"})


# -- SVMClassifier ------------------------------------------------------------------------------------

def svc_attrs(n_classes, n_features, proba, kernel="RBF", params=(0.3, 0.1, 2), labels=None):
    per_class = rng.integers(1, 4, n_classes)
    v = int(per_class.sum())
    pairs = n_classes * (n_classes - 1) // 2
    attrs = {"kernel_type": kernel, "kernel_params": list(params), "vectors_per_class": per_class.tolist(),
             "support_vectors": rng.standard_normal(v * n_features).tolist(),
             "coefficients": rng.standard_normal((n_classes - 1) * v).tolist(),
             "rho": rng.standard_normal(pairs).tolist()}
    if proba:
        attrs["prob_a"] = (-np.abs(rng.standard_normal(pairs)) - 0.5).tolist()
        attrs["prob_b"] = (rng.standard_normal(pairs) * 0.1).tolist()
    labels = labels or list(range(10, 10 + n_classes))
    attrs["classlabels_strings" if isinstance(labels[0], str) else "classlabels_ints"] = labels
    return attrs


@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("proba", [False, True])
@pytest.mark.parametrize("kernel, params", KERNELS)
def test_svm_classifier_svc(n_classes, proba, kernel, params):
    x = rng.standard_normal((11, 3)).astype(np.float32)
    attrs = svc_attrs(n_classes, 3, proba, kernel, ((params or []) + [0.0, 0.0, 0.0])[:3])
    check_ml("SVMClassifier", [x], attrs, n_outputs=2, opset=1, oracle="ort")


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_svm_classifier_post_transforms(transform, n_classes):
    x = rng.standard_normal((8, 3)).astype(np.float32)
    for proba in (False, True):
        if n_classes == 2 and not proba and transform == "PROBIT":
            continue  # onnxruntime leaves the second score column unwritten there
        attrs = {**svc_attrs(n_classes, 3, proba, labels=["x", "y", "z"][:n_classes]), "post_transform": transform}
        check_ml("SVMClassifier", [x], attrs, n_outputs=2, opset=1, oracle="ort", atol=_atol(transform))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("positive", [False, True])
def test_svm_classifier_linear_mode(n_classes, positive):
    x = rng.standard_normal((10, 4)).astype(np.float32)
    coef = rng.standard_normal(n_classes * 4)
    attrs = {"coefficients": (np.abs(coef) / 4 if positive else coef).tolist(), "rho": [0.1],
             "classlabels_ints": list(range(n_classes)), "kernel_type": "LINEAR", "kernel_params": [0.0, 0.0, 0.0]}
    # the best class: onnx.reference labels more than two classes 1 / 0 by the sign of the
    # best score, onnxruntime picks the second of two classes when the best score is > 0
    check_ml("SVMClassifier", [x], attrs, n_outputs=2, opset=1, oracle="ort" if n_classes > 2 else "ref")


def test_svm_classifier_input_types():
    attrs = svc_attrs(3, 2, True)
    for dtype in (np.float64, np.int64, np.int32):
        x = (rng.standard_normal((5, 2)) * 2).astype(dtype)
        check_ml("SVMClassifier", [x], attrs, n_outputs=2, opset=1, oracle="ort")


def test_svm_classifier_bad():
    attrs = svc_attrs(3, 2, False)
    with pytest.raises(mlrt.MlrtError, match="features"):
        run("SVMClassifier", [np.ones((2, 3), np.float32)], attrs, n_outputs=2)
    bad = {**attrs, "rho": [0.0]}
    with pytest.raises(mlrt.MlrtError, match="rho"):
        run("SVMClassifier", [np.ones((2, 2), np.float32)], bad, n_outputs=2)


def test_string_labels_named_after_a_plan_run():
    """String class labels: the plan writes class indexes and names them after its run,
    also where an Identity passes them on to the output (as skl2onnx writes it); where
    they are read as strings by another node (a CategoryMapper), node by node.  Every
    way against onnxruntime, over the run that plans and the quick runs after it."""
    ort = pytest.importorskip("onnxruntime")
    import mlrt.lowlevel as ml
    from onnx import TensorProto, helper

    rng = np.random.default_rng(11)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    attrs = {"coefficients": rng.standard_normal(12).tolist(), "intercepts": [0.1, -0.2, 0.3],
             "classlabels_strings": ["cat", "dog", "eel"], "post_transform": "SOFTMAX"}
    clf = helper.make_node("LinearClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", **attrs)
    tails = {"identity": [helper.make_node("Identity", ["label"], ["out"])],
             "mapper": [helper.make_node("Identity", ["label"], ["out"]),
                        helper.make_node("CategoryMapper", ["label"], ["ids"], domain="ai.onnx.ml",
                                         cats_strings=["dog", "eel"], cats_int64s=[7, 9])]}
    for name, tail in tails.items():
        outs = [helper.make_tensor_value_info(o, t, None) for o, t in
                (("out", TensorProto.STRING), ("scores", TensorProto.FLOAT), ("ids", TensorProto.INT64))
                if any(o in n.output for n in [clf, *tail])]
        graph = helper.make_graph([clf, *tail], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
                                  outs)
        model = helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 17),
                                                                       helper.make_opsetid("ai.onnx.ml", 3)])
        want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
        sess = ml.InferenceSession(model.SerializeToString())
        for _ in range(3):
            got = sess.run(None, {"x": x})
            assert got[0].dtype == object and list(got[0]) == list(want[0]), name
            np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
            if name == "mapper":
                np.testing.assert_array_equal(got[2], want[2])
        planned = [p for p in sess._runnable.pieces[0].runnable.plans.values() if hasattr(p, "steps")]
        assert bool(planned) == (name == "identity"), name
