"""App 4: scikit-learn pipelines with string and numeric columns (ColumnTransformer:
OneHotEncoder on two string columns, StandardScaler on two numeric ones), converted by
skl2onnx with one input per column: a LogisticRegression with string class labels and
its default ZipMap output (a list of dicts), and a RandomForest without ZipMap. The app
feeds the string columns as dtype <U and as dtype object."""

import csv

import numpy as np
import pytest

skl2onnx = pytest.importorskip("skl2onnx")
from skl2onnx.common.data_types import FloatTensorType, StringTensorType  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402

COLUMNS = ["city", "plan", "age", "income"]
CITIES = ["paris", "oslo", "lima", "são paulo", "kyoto"]
PLANS = ["basic", "plus", "pro"]


def customers(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    city = rng.choice(CITIES, n)
    plan = rng.choice(PLANS, n)
    age = rng.integers(18, 80, n).astype(float)
    income = rng.gamma(4, 9000, n).round(2)
    score = (plan == "pro") * 1.5 - (city == "oslo") + (age - 45) / 15 + rng.normal(0, 0.7, n)
    label = np.where(score > 0.8, "churn", np.where(score > -0.6, "stay", "upgrade"))
    return np.array([city, plan, age, income], dtype=object).T, label


def pipeline(classifier) -> Pipeline:
    prep = ColumnTransformer([("strings", OneHotEncoder(handle_unknown="ignore"), [0, 1]),
                              ("numbers", StandardScaler(), [2, 3])])
    return Pipeline([("prep", prep), ("clf", classifier)])


def test_sklearn_pipelines(tmp_path, run_app):
    X, y = customers(300, 41)
    initial_types = [("city", StringTensorType([None, 1])), ("plan", StringTensorType([None, 1])),
                     ("age", FloatTensorType([None, 1])), ("income", FloatTensorType([None, 1]))]
    paths = []
    for name, clf, options in [("logreg", LogisticRegression(max_iter=500), None),
                               ("forest", RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0),
                                {RandomForestClassifier: {"zipmap": False}})]:
        model = skl2onnx.convert_sklearn(pipeline(clf).fit(X, y), name, initial_types, target_opset=17,
                                         options=options)
        paths.append(tmp_path / f"{name}.onnx")
        paths[-1].write_bytes(model.SerializeToString())
    table, _ = customers(25, 42)
    table[3, 0] = "reykjavík"  # a city the encoder never saw
    with open(tmp_path / "customers.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        writer.writerows(table.tolist())
    ort, ours = run_app("score_customers.py", tmp_path / "customers.csv", *paths)
    assert any("zipmap dict ['churn', 'stay', 'upgrade'] float" in line for line in ort.lines), ort.lines
    assert len({line for line in ort.lines if "first customer" in line}) == 2  # the same row each time
    ours.assert_matches(ort)
