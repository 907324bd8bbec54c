"""TreeEnsembleRegressor / TreeEnsembleClassifier (ai.onnx.ml 1, 3) and TreeEnsemble (5)
against onnx.reference and onnxruntime, on random forests built here.

onnx.reference is the oracle where it implements the case; onnxruntime where the
reference stops short (post transforms of regressors, two-class layouts, a NaN at a
BRANCH_NEQ node, targets no leaf reaches under MIN / MAX) -- see each op's docstring."""

import numpy as np
import pytest
from onnx import numpy_helper

import mlrt
from mlrt.native.ops import lookup
from mlrt.native.plan.eager import run_eager
from _ml_oracle import check_ml, ml_model
from oracle import make_model, run_mlrt, run_reference

MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def random_forest(rng, n_trees=3, depth=4, n_features=4, n_targets=1, modes=MODES, missing=True,
                  weights_per_leaf=None, shuffle=True, grid=None):
    """Legacy (opset 1/3) node lists for n_trees random trees; node ids shuffled per tree."""
    grid = np.round(np.linspace(-1.5, 1.5, 7), 2) if grid is None else grid
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true")}
    w = {k: [] for k in ("treeids", "nodes", "ids", "weights")}
    for t in (range(n_trees - 1, -1, -1) if shuffle else range(n_trees)):
        records = []

        def grow(level):
            me = len(records)
            records.append(None)
            if level == depth or (level > 0 and rng.random() < 0.2):
                records[me] = ("LEAF", 0, 0.0, 0, 0, 0)
                return me
            left = grow(level + 1)
            right = grow(level + 1)
            records[me] = (str(rng.choice(modes)), int(rng.integers(n_features)), float(rng.choice(grid)),
                           left, right, int(missing and rng.random() < 0.5))
            return me

        grow(0)
        ids = rng.permutation(len(records)) if shuffle else np.arange(len(records))
        order = list(range(len(records)))
        if shuffle:  # the root stays first; the rest in any order
            rest = order[1:]
            rng.shuffle(rest)
            order = [0] + rest
        for i in order:
            mode, feat, val, left, right, miss = records[i]
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(int(ids[i]))
            a["nodes_featureids"].append(feat)
            a["nodes_modes"].append(mode)
            a["nodes_values"].append(val)
            a["nodes_truenodeids"].append(int(ids[left]) if mode != "LEAF" else 0)
            a["nodes_falsenodeids"].append(int(ids[right]) if mode != "LEAF" else 0)
            a["nodes_missing_value_tracks_true"].append(miss)
            if mode == "LEAF":
                targets = range(n_targets) if weights_per_leaf is None else rng.choice(
                    n_targets, weights_per_leaf, replace=False)
                for k in targets:
                    w["treeids"].append(t)
                    w["nodes"].append(int(ids[i]))
                    w["ids"].append(int(k))
                    w["weights"].append(float(np.round(rng.standard_normal(), 3)))
    return a, w


def features(rng, n, f, nan=False, dtype=np.float32):
    grid = np.round(np.linspace(-1.5, 1.5, 7), 2)
    x = np.where(rng.random((n, f)) < 0.3, rng.choice(grid, (n, f)), rng.uniform(-2, 2, (n, f)))
    if nan:
        x[rng.random((n, f)) < 0.15] = np.nan
    return x.astype(dtype)


def regressor_attrs(a, w, n_targets, **extra):
    return {**a, "target_treeids": w["treeids"], "target_nodeids": w["nodes"], "target_ids": w["ids"],
            "target_weights": w["weights"], "n_targets": n_targets, **extra}


def classifier_attrs(a, w, labels, **extra):
    key = "classlabels_strings" if isinstance(labels[0], str) else "classlabels_int64s"
    return {**a, "class_treeids": w["treeids"], "class_nodeids": w["nodes"], "class_ids": w["ids"],
            "class_weights": w["weights"], key: labels, **extra}


rng = np.random.default_rng(7)


# -- TreeEnsembleRegressor -------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 13, 127])
@pytest.mark.parametrize("agg", ["SUM", "AVERAGE", "MIN", "MAX"])
def test_regressor_aggregates(n, agg):
    a, w = random_forest(rng, n_trees=4, n_targets=2)
    x = features(rng, n, 4)
    check_ml("TreeEnsembleRegressor", [x], regressor_attrs(a, w, 2, aggregate_function=agg,
                                                              base_values=[0.5, -1.0]), opset=3, oracle="both")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_regressor_input_types(dtype):
    a, w = random_forest(rng, n_trees=3, n_targets=1)
    x = (features(rng, 20, 4) * (1 if np.dtype(dtype).kind == "f" else 2)).astype(dtype)
    expected = check_ml("TreeEnsembleRegressor", [x.astype(np.float64)], regressor_attrs(a, w, 1), opset=3,
                        oracle="both", ref_float32=True)
    if np.dtype(dtype).kind != "f":
        # onnx.reference sums integer inputs' scores in the integer type and onnxruntime has
        # no integer kernel: the oracle is the float64 result of the same integers
        got = _run("TreeEnsembleRegressor", x, regressor_attrs(a, w, 1))
        np.testing.assert_array_equal(got[0], expected[0])


def test_regressor_missing_values_follow_the_track():
    a, w = random_forest(rng, n_trees=5, n_targets=1, modes=MODES[:5])
    x = features(rng, 60, 4, nan=True)
    check_ml("TreeEnsembleRegressor", [x], regressor_attrs(a, w, 1), opset=3, oracle="both")


def test_regressor_nan_at_neq_goes_true():
    # x != t holds for NaN (onnxruntime); onnx.reference sends it down the missing track
    a, w = random_forest(rng, n_trees=5, n_targets=1, modes=["BRANCH_NEQ", "BRANCH_LEQ"])
    x = features(rng, 60, 4, nan=True)
    check_ml("TreeEnsembleRegressor", [x], regressor_attrs(a, w, 1), opset=3, oracle="ort")


def test_regressor_edge_values():
    a, w = random_forest(rng, n_trees=4, n_targets=1, modes=MODES[:5])
    x = np.array([[np.inf, -np.inf, 1e-40, -0.0], [3.4e38, -3.4e38, 0.5, -1.5], [-0.0, 0.0, -1e-40, 1.5]], np.float32)
    check_ml("TreeEnsembleRegressor", [x], regressor_attrs(a, w, 1), opset=3, oracle="both")


@pytest.mark.parametrize("transform", ["LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_regressor_post_transforms(transform):
    a, w = random_forest(rng, n_trees=3, n_targets=3)
    x = features(rng, 9, 4)
    atol = 1e-3 if transform == "PROBIT" else None  # onnxruntime's float32 erfinv
    check_ml("TreeEnsembleRegressor", [x], regressor_attrs(a, w, 3, post_transform=transform), opset=3,
             oracle="ort", atol=atol)


def test_regressor_targets_without_leaves_count_zero():
    a, w = random_forest(rng, n_trees=4, n_targets=3, weights_per_leaf=1)
    x = features(rng, 30, 4)
    for agg in ("MIN", "MAX", "SUM"):
        check_ml("TreeEnsembleRegressor", [x], regressor_attrs(a, w, 3, aggregate_function=agg), opset=3,
                 oracle="ort")


def test_regressor_as_tensor_attributes_and_opset_1():
    a, w = random_forest(rng, n_trees=3, n_targets=2)
    x = features(rng, 11, 4, dtype=np.float64)
    attrs = regressor_attrs(a, w, 2)
    check_ml("TreeEnsembleRegressor", [x], attrs, opset=1, oracle="both", ref_float32=True)
    values, weights = attrs.pop("nodes_values"), attrs.pop("target_weights")
    attrs["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(values, np.float64))
    attrs["target_weights_as_tensor"] = numpy_helper.from_array(np.array(weights, np.float64))
    attrs["base_values_as_tensor"] = numpy_helper.from_array(np.array([0.25, 0.75], np.float64))
    check_ml("TreeEnsembleRegressor", [x], attrs, opset=3, oracle="ort")


def test_regressor_one_row_empty_batch_and_many_trees():
    a, w = random_forest(rng, n_trees=40, depth=6, n_targets=1)
    # a 1-D X is one row (onnxruntime's shape inference wants rank 2)
    check_ml("TreeEnsembleRegressor", [features(rng, 1, 4)[0]], regressor_attrs(a, w, 1), opset=3, oracle="ref")
    check_ml("TreeEnsembleRegressor", [features(rng, 0, 4)], regressor_attrs(a, w, 1), opset=3, oracle="ort")
    check_ml("TreeEnsembleRegressor", [features(rng, 500, 4)], regressor_attrs(a, w, 1), opset=3, oracle="both")


@pytest.mark.parametrize("n_rows,n_features", [(1, 4), (13, 4), (127, 9), (200, 300), (3, 3000)])
def test_row_blocks(n_rows, n_features):
    # the kernel walks rows in blocks sized to its stack scratch; 3000 features take the heap
    a, w = random_forest(rng, n_trees=5, depth=5, n_features=n_features, n_targets=3)
    check_ml("TreeEnsembleRegressor", [features(rng, n_rows, n_features)], regressor_attrs(a, w, 3), opset=3,
             oracle="ort")


# -- TreeEnsembleClassifier -------------------------------------------------------------

@pytest.mark.parametrize("labels", [[3, 5, 9], ["a", "b", "c", "d"]])
@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
def test_classifier_multiclass(labels, transform):
    a, w = random_forest(rng, n_trees=4, n_targets=len(labels))
    x = features(rng, 25, 4)
    check_ml("TreeEnsembleClassifier", [x], classifier_attrs(a, w, labels, post_transform=transform,
                                                             base_values=[0.1] * len(labels)),
             n_outputs=2, opset=3, oracle="both")


@pytest.mark.parametrize("labels", [[0, 1], [4, 7], ["no", "yes"]])
@pytest.mark.parametrize("transform", ["NONE", "LOGISTIC"])
@pytest.mark.parametrize("positive", [True, False])
def test_classifier_binary_one_score(labels, transform, positive):
    # every weight names class 0 (how scikit-learn converters write binary models)
    a, w = random_forest(rng, n_trees=5, n_targets=1)
    if positive:
        w["weights"] = [abs(v) / 5 for v in w["weights"]]
    x = features(rng, 40, 4)
    for base in ([], [0.2]):
        attrs = classifier_attrs(a, w, labels, post_transform=transform, **({"base_values": base} if base else {}))
        check_ml("TreeEnsembleClassifier", [x], attrs, n_outputs=2, opset=3, oracle="ort")


@pytest.mark.parametrize("labels", [[0, 1], [4, 7], ["p", "q"]])
def test_classifier_two_classes_both_scored(labels):
    # the best class, as onnx.reference says (onnxruntime answers 1 / 0 whatever the labels)
    a, w = random_forest(rng, n_trees=3, n_targets=2)
    x = features(rng, 30, 4)
    for extra in ({}, {"base_values": [0.25, -0.25]}, {"post_transform": "SOFTMAX"}):
        check_ml("TreeEnsembleClassifier", [x], classifier_attrs(a, w, labels, **extra), n_outputs=2, opset=3,
                 oracle="ref")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_classifier_input_types_and_opset_1(dtype):
    a, w = random_forest(rng, n_trees=3, n_targets=3, modes=MODES[:5])
    x = (features(rng, 12, 4) * 3).astype(dtype)
    check_ml("TreeEnsembleClassifier", [x], classifier_attrs(a, w, [1, 2, 3]), n_outputs=2, opset=1, oracle="both")


# -- TreeEnsemble (opset 5) ------------------------------------------------------------------

def v5_forest(rng, n_trees=3, depth=4, n_features=4, n_targets=2, members=False, dtype=np.float32):
    """Random opset-5 attributes: branch nodes list, leaves list, roots; optional set membership."""
    grid = np.round(np.linspace(-1.5, 1.5, 7), 2)
    nodes = {k: [] for k in ("feat", "split", "mode", "t", "f", "tl", "fl", "miss")}
    leaves_t, leaves_w, roots, sets = [], [], [], []

    def leaf():
        leaves_t.append(int(rng.integers(n_targets)))
        leaves_w.append(float(np.round(rng.standard_normal(), 3)))
        return len(leaves_t) - 1, 1

    def grow(level):
        if level > 0 and (level == depth or rng.random() < 0.2):
            return leaf()
        me = len(nodes["feat"])
        for k in nodes:
            nodes[k].append(0)
        mode = int(rng.integers(7 if members else 6))
        nodes["feat"][me], nodes["mode"][me] = int(rng.integers(n_features)), mode
        nodes["split"][me] = float(rng.choice(grid)) if mode != 6 else np.nan
        nodes["miss"][me] = int(rng.random() < 0.5)
        if mode == 6:  # no 0.0 member: onnx.reference ends a set at a falsy member
            sets.append(sorted(set(rng.choice(grid[grid != 0], int(rng.integers(1, 4))).tolist())))
        nodes["t"][me], nodes["tl"][me] = grow(level + 1)
        nodes["f"][me], nodes["fl"][me] = grow(level + 1)
        return me, 0

    for _ in range(n_trees):
        roots.append(grow(0)[0])
    attrs = {"nodes_featureids": nodes["feat"], "nodes_splits": numpy_helper.from_array(np.array(nodes["split"], dtype)),
             "nodes_modes": numpy_helper.from_array(np.array(nodes["mode"], np.uint8)),
             "nodes_truenodeids": nodes["t"], "nodes_falsenodeids": nodes["f"], "nodes_trueleafs": nodes["tl"],
             "nodes_falseleafs": nodes["fl"], "nodes_missing_value_tracks_true": nodes["miss"],
             "leaf_targetids": leaves_t, "leaf_weights": numpy_helper.from_array(np.array(leaves_w, dtype)),
             "tree_roots": roots, "n_targets": n_targets}
    if sets:
        flat = [v for s in sets for v in s + [np.nan]]
        attrs["membership_values"] = numpy_helper.from_array(np.array(flat, dtype))
    return attrs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("members", [False, True])
def test_tree_ensemble_v5(dtype, members):
    attrs = v5_forest(rng, n_trees=4, members=members, dtype=dtype)
    x = features(rng, 50, 4, nan=True, dtype=dtype)
    # onnxruntime takes only integer set members
    check_ml("TreeEnsemble", [x], {**attrs, "aggregate_function": 1}, opset=5, oracle="ref" if members else "both")


@pytest.mark.parametrize("agg", [0, 1])  # AVERAGE, SUM (MIN/MAX: onnx.reference starts from +-max float)
def test_tree_ensemble_v5_aggregates(agg):
    attrs = v5_forest(rng, n_trees=6, n_targets=1)
    check_ml("TreeEnsemble", [features(rng, 20, 4)], {**attrs, "aggregate_function": agg}, opset=5, oracle="both")


@pytest.mark.parametrize("agg", [2, 3])
def test_tree_ensemble_v5_min_max(agg):
    attrs = v5_forest(rng, n_trees=6, n_targets=1)
    check_ml("TreeEnsemble", [features(rng, 20, 4)], {**attrs, "aggregate_function": agg}, opset=5, oracle="both")


def test_tree_ensemble_v5_float16():
    attrs = v5_forest(rng, n_trees=3, n_targets=3, dtype=np.float16)
    x = features(rng, 10, 4, dtype=np.float16)
    check_ml("TreeEnsemble", [x], attrs, opset=5, oracle="ref", rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("transform, op", [(1, "Softmax"), (2, "Sigmoid")])
def test_tree_ensemble_v5_post_transform(transform, op):
    # onnx.reference ignores post_transform and onnxruntime 1.31 swaps SOFTMAX (1) and
    # LOGISTIC (2): the oracle is the reference's scores through its Softmax / Sigmoid
    attrs = v5_forest(rng, n_trees=3, n_targets=3)
    x = features(rng, 10, 4)
    plain = check_ml("TreeEnsemble", [x], attrs, opset=5, oracle="ref")[0]
    got = _run("TreeEnsemble", x, {**attrs, "post_transform": transform}, opset=5)[0]
    expected = run_reference(make_model(op, [plain], {"axis": 1} if op == "Softmax" else {}), [plain])[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# -- bad models and inputs ---------------------------------------------------------------------

def _run(op, x, attrs, n_outputs=1, opset=3):
    return run_mlrt(ml_model(op, [x], attrs, n_outputs, opset), [x])


def test_bad_trees_are_refused():
    a, w = random_forest(rng, n_trees=2, n_targets=1, shuffle=False)
    x = features(rng, 3, 4)
    bad = dict(a, nodes_truenodeids=[99] + a["nodes_truenodeids"][1:])
    with pytest.raises(mlrt.MlrtError, match="child"):
        _run("TreeEnsembleRegressor", x, regressor_attrs(bad, w, 1))
    bad = dict(a, nodes_modes=["BRANCH_XX"] + a["nodes_modes"][1:])
    with pytest.raises(mlrt.MlrtError, match="mode"):
        _run("TreeEnsembleRegressor", x, regressor_attrs(bad, w, 1))
    with pytest.raises(mlrt.MlrtError, match="feature"):
        _run("TreeEnsembleRegressor", x[:, :2], regressor_attrs(a, w, 1))  # too few features
    with pytest.raises(mlrt.MlrtError, match="target"):
        _run("TreeEnsembleRegressor", x, regressor_attrs(a, dict(w, ids=[5] * len(w["ids"])), 1))
    with pytest.raises(mlrt.MlrtError):
        _run("TreeEnsembleRegressor", np.zeros((2, 2, 4), np.float32), regressor_attrs(a, w, 1))
    with pytest.raises(mlrt.MlrtError, match="two"):
        _run("TreeEnsembleClassifier", x, classifier_attrs(a, w, [1]), n_outputs=2)


def test_a_cycle_fails_instead_of_hanging():
    a = {"nodes_treeids": [0, 0, 0], "nodes_nodeids": [0, 1, 2], "nodes_featureids": [0, 0, 0],
         "nodes_modes": ["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"], "nodes_values": [0.0, 0.0, 0.0],
         "nodes_truenodeids": [1, 0, 0], "nodes_falsenodeids": [2, 0, 0]}
    w = {"treeids": [0], "nodes": [2], "ids": [0], "weights": [1.0]}
    x = np.array([[-1.0], [1.0]], np.float32)
    with pytest.raises(mlrt.MlrtError, match="cycle"):
        _run("TreeEnsembleRegressor", x, regressor_attrs(a, w, 1))


# The loaders above refuse bad attributes; the kernel checks each index as its walk uses
# it (no pass over every node per run): tables corrupted after loading must fail cleanly.
# One tree: node 0 sends x[0] <= 0 to leaf 1 (weight 1), else to leaf 2 (weight 2); it
# tracks missing values, so the kernel takes its general walk, not the same-mode one.
STUMP = {"nodes_treeids": [0, 0, 0], "nodes_nodeids": [0, 1, 2], "nodes_featureids": [0, 0, 0],
         "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF"], "nodes_values": [0.0, 0.0, 0.0],
         "nodes_truenodeids": [1, 0, 0], "nodes_falsenodeids": [2, 0, 0], "nodes_missing_value_tracks_true": [1, 0, 0],
         "target_treeids": [0, 0], "target_nodeids": [1, 2], "target_ids": [0, 0], "target_weights": [1.0, 2.0],
         "n_targets": 1}


def _run_corrupted(attrs, table, index, value, op_type="TreeEnsembleRegressor", opset=3):
    x = np.array([[-1.0], [1.0]], np.float32)
    op = lookup("ai.onnx.ml", op_type, opset)(ml_model(op_type, [x], attrs, 1, opset).graph.node[0], opset)
    assert np.allclose(run_eager(op, [x], None)[0], [[1.0], [2.0]])  # the intact tables
    op.tables[table] = op.tables[table].copy()
    op.tables[table][index] = value
    return run_eager(op, [x], None)


@pytest.mark.parametrize("table,index,value,message", [
    (0, (0, 1), 5, "node 0 reads feature 5"),
    (0, (0, 1), -1, "node 0 reads feature -1"),
    (0, (0, 2), 99, "node 0: a child is outside"),
    (0, (0, 3), -2, "node 0: a child is outside"),
    (0, (0, 0), 9, "node 0: bad kind 9"),
    (0, (0, 0), -1, "node 0: bad kind -1"),
    (0, (0, 2), 0, "cycle"),
    (2, 0, 3, r"tree 0: root 3 outside"),
    (0, (1, 3), 5, r"leaf 1: weights \[0, \+5\)"),
    (0, (2, 2), -1, "leaf 2: weights"),
    (3, 1, 4, "weight 1 names target 4 of 1"),
])
def test_corrupted_tables_fail_where_the_walk_meets_them(table, index, value, message):
    with pytest.raises(mlrt.MlrtError, match=message):
        _run_corrupted(STUMP, table, index, value)


def test_corrupted_tables_same_mode_walk():
    # every branch is LEQ and tracks no missing value: the same-mode walk checks too
    attrs = dict(STUMP, nodes_missing_value_tracks_true=[0, 0, 0])
    with pytest.raises(mlrt.MlrtError, match="node 0: kind 1, but same_mode is 0"):
        _run_corrupted(attrs, 0, (0, 0), 1)
    with pytest.raises(mlrt.MlrtError, match="node 0 reads feature 7"):
        _run_corrupted(attrs, 0, (0, 1), 7)
    with pytest.raises(mlrt.MlrtError, match="node 0: a child is outside"):
        _run_corrupted(attrs, 0, (0, 3), 3)


@pytest.mark.parametrize("value", [1e9, -1.0, 0.5, np.nan])
def test_corrupted_set_fails(value):
    # node 0: x[0] in {-1} goes to leaf 0 (weight 1), else to leaf 1 (weight 2)
    attrs = {"nodes_featureids": [0], "nodes_splits": numpy_helper.from_array(np.array([np.nan], np.float32)),
             "nodes_modes": numpy_helper.from_array(np.array([6], np.uint8)), "nodes_truenodeids": [0],
             "nodes_falsenodeids": [1], "nodes_trueleafs": [1], "nodes_falseleafs": [1],
             "membership_values": numpy_helper.from_array(np.array([-1.0, np.nan], np.float32)),
             "leaf_targetids": [0, 0], "leaf_weights": numpy_helper.from_array(np.array([1.0, 2.0], np.float32)),
             "tree_roots": [0], "n_targets": 1}
    with pytest.raises(mlrt.MlrtError, match="node 0: its set is not inside"):
        _run_corrupted(attrs, 1, 0, value, op_type="TreeEnsemble", opset=5)
    with pytest.raises(mlrt.MlrtError, match="node 0: its set is not inside"):  # a size past the end
        _run_corrupted(attrs, 5, 0, 2.0 if np.isnan(value) else value, op_type="TreeEnsemble", opset=5)


def test_v5_bad_leaf_index():
    attrs = v5_forest(rng, n_trees=1)
    attrs["nodes_truenodeids"] = [50] + attrs["nodes_truenodeids"][1:]
    attrs["nodes_trueleafs"] = [1] + attrs["nodes_trueleafs"][1:]
    with pytest.raises(mlrt.MlrtError, match="leaf"):
        _run("TreeEnsemble", features(rng, 2, 4), attrs, opset=5)


def test_int_and_string_labels_are_planned():
    """String labels too: the plan writes class indexes and names them after its run
    (plain runs and the session's quick runs alike), as the host path does."""
    import mlrt.lowlevel as ml
    a, w = random_forest(rng, n_trees=3, n_targets=3)
    x = features(rng, 9, 4)
    got = {}
    for labels in ([1, 2, 3], ["a", "b", "c"]):
        model = ml_model("TreeEnsembleClassifier", [x], classifier_attrs(a, w, labels), 2, opset=3)
        sess = ml.InferenceSession(model.SerializeToString())
        runs = [sess.run(None, {"x0": x}) for _ in range(3)]
        assert sess._runnable.pieces[0].runnable.plans, labels
        for y, z in runs[1:]:
            np.testing.assert_array_equal(y, runs[0][0])
            np.testing.assert_array_equal(z, runs[0][1])
        got[str(labels[0])] = runs[0][0]
    assert got["a"].dtype == object
    np.testing.assert_array_equal(got["a"], np.array(["a", "b", "c"], dtype=object)[got["1"] - 1])


# -- made while the checker works ------------------------------------------------------------

def test_tables_are_made_at_load_and_handed_out_once():
    """A session makes its tree tables while onnx's checker runs (ops.prepare); the
    partition takes that operator, and a later make_op makes a new one."""
    from mlrt.native import load as loading
    from mlrt.native.ops import make_op, prepare
    a, w = random_forest(rng, n_trees=2, n_targets=1)
    model = ml_model("TreeEnsembleRegressor", [features(rng, 3, 4)], regressor_attrs(a, w, 1), 1, 3)
    g = loading.load(model.SerializeToString(), prepare=prepare)
    node = g.nodes[0]
    made = g.prepared[id(node)][1]
    assert make_op(node, g) is made and not g.prepared
    again = make_op(node, g)
    assert again is not made
    for mine, theirs in zip(made.tables, again.tables):
        np.testing.assert_array_equal(mine, theirs)


def test_trees_that_fail_to_make_fail_where_they_did():
    """A malformed ensemble is not made at load; the error comes when the session places
    the node, as before (and never before the checker's verdict)."""
    from mlrt.native import load as loading
    from mlrt.native.ops import prepare
    a, w = random_forest(rng, n_trees=2, n_targets=1, shuffle=False)
    bad = dict(a, nodes_modes=["BRANCH_XX"] + a["nodes_modes"][1:])
    model = ml_model("TreeEnsembleRegressor", [features(rng, 3, 4)], regressor_attrs(bad, w, 1), 1, 3)
    g = loading.load(model.SerializeToString(), prepare=prepare)
    assert not g.prepared
    with pytest.raises(mlrt.MlrtError, match="mode"):
        _run("TreeEnsembleRegressor", features(rng, 3, 4), regressor_attrs(bad, w, 1))
    unchecked = ml_model("TreeEnsembleRegressor", [features(rng, 3, 4)], regressor_attrs(bad, w, 1), 1, 3)
    unchecked.graph.node[0].attribute.append(__import__("onnx").helper.make_attribute("bogus", 1))
    with pytest.raises(mlrt.InvalidModel, match="ONNX checker"):
        loading.load(unchecked.SerializeToString(), prepare=prepare)
