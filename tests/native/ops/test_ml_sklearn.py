"""Whole scikit-learn models converted by skl2onnx: mlrt against onnxruntime (and the
labels against scikit-learn itself).

Needs scikit-learn and skl2onnx, which are not mlrt's dependencies: the module is
skipped without them (checked with scikit-learn 1.9.1, skl2onnx 1.20.0)."""

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="scikit-learn is an optional oracle for the ai.onnx.ml ops")
pytest.importorskip("skl2onnx", reason="skl2onnx converts the scikit-learn models under test")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the converted models as the oracle")

from skl2onnx import to_onnx  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import Normalizer, OneHotEncoder, StandardScaler  # noqa: E402
from sklearn.svm import SVC, SVR  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import mlrt.lowlevel as ml  # noqa: E402
from _ml_oracle import same  # noqa: E402

TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def _svc_with_probabilities():
    try:
        return SVC(probability=True, random_state=0)
    except TypeError:  # removed from scikit-learn 1.11
        pytest.skip("this scikit-learn has no SVC(probability=True)")


def _data(n_classes=2, n=120, seed=0):
    x, y = make_classification(n, 6, n_informative=4, n_redundant=0, n_classes=n_classes, random_state=seed)
    return x.astype(np.float32), y


def _compare(model, x, zipmap=True):
    options = None if zipmap or not hasattr(model, "predict_proba") else {id(model): {"zipmap": False}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        onx = to_onnx(model, x[:1], options=options, target_opset=TARGET_OPSET)
    feeds = {onx.graph.input[0].name: x}
    expected = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ml.InferenceSession(onx.SerializeToString()).run(None, feeds)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        same(g, e, 1e-4, 1e-5, f"{type(model).__name__} output {i}")
    return got


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("make", [
    lambda: LogisticRegression(max_iter=500),
    _svc_with_probabilities,
    lambda: SVC(kernel="poly", degree=2),
    lambda: RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0),
    lambda: GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0),
    lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)),
    lambda: make_pipeline(Normalizer(), SVC()),
], ids=["logreg", "svc-proba", "svc-poly", "forest", "boosting", "tree", "scaler-logreg", "normalizer-svc"])
def test_classifiers(make, n_classes):
    x, y = _data(n_classes)
    model = make().fit(x, y)
    labels, _ = _compare(model, x, zipmap=False)
    if not isinstance(model, SVC) or getattr(model, "probability", False) is False:
        np.testing.assert_array_equal(labels, model.predict(x))
    _compare(model, x[:7], zipmap=True)  # probabilities as a list of {label: p} maps


def test_string_labels():
    x, y = _data(3)
    names = np.array(["ant", "bee", "cat"])[y]
    for model in (RandomForestClassifier(n_estimators=4, random_state=0), LogisticRegression(max_iter=500)):
        model.fit(x, names)
        labels, _ = _compare(model, x, zipmap=False)
        assert list(labels) == list(model.predict(x))


@pytest.mark.parametrize("make", [
    lambda: LinearRegression(),
    lambda: SVR(),
    lambda: RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0),
    lambda: GradientBoostingRegressor(n_estimators=8, random_state=0),
    lambda: make_pipeline(StandardScaler(), SVR(kernel="linear")),
], ids=["linear", "svr", "forest", "boosting", "scaler-svr"])
def test_regressors(make):
    x, y = make_regression(100, 5, random_state=0)
    x = x.astype(np.float32)
    model = make().fit(x, y)
    (pred,) = _compare(model, x)
    np.testing.assert_allclose(pred.ravel(), model.predict(x), rtol=1e-3, atol=1e-3 * np.abs(y).max())


def test_one_hot_encoded_strings():
    rng = np.random.default_rng(0)
    colors = rng.choice(["red", "green", "blue"], 60)
    sizes = rng.choice(["S", "M", "L", "XL"], 60)
    x = np.stack([colors, sizes], axis=1).astype(object)
    y = (colors == "red") ^ (sizes == "L")
    model = make_pipeline(ColumnTransformer([("cat", OneHotEncoder(), [0, 1])]), LogisticRegression()).fit(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from skl2onnx.common.data_types import StringTensorType
        onx = to_onnx(model, initial_types=[("x", StringTensorType([None, 2]))], target_opset=TARGET_OPSET,
                      options={id(model.steps[-1][1]): {"zipmap": False}})
    feeds = {"x": x}
    expected = ort.InferenceSession(onx.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ml.InferenceSession(onx.SerializeToString()).run(None, feeds)
    for g, e in zip(got, expected):
        same(g, e, 1e-5, 1e-6, "one-hot pipeline")
    np.testing.assert_array_equal(got[0], model.predict(x))
