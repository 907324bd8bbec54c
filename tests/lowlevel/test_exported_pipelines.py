"""Two kinds of deployed model end to end against onnxruntime, through InferenceSession:
a scikit-learn pipeline over a table with string columns converted by skl2onnx (numbers
imputed and scaled, strings one-hot and ordinal encoded, string class labels), which runs
as one native plan, strings and labels included; and a stacked bidirectional LSTM with
sequence_lens in the form torch.onnx exports (Slice of the initial states, Transpose +
Reshape between layers, lengths Cast to int32), at batch 1 and 8, on 1 and 2 threads."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

import mlrt.lowlevel as ml

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle these models are held against")


def _ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


# -- scikit-learn, string columns ---------------------------------------------------------------

def _string_pipeline(zipmap: bool = False):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("sklearn")
    skl2onnx = pytest.importorskip("skl2onnx")
    from skl2onnx.common.data_types import FloatTensorType, StringTensorType
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    rng = np.random.default_rng(3)
    n, numeric = 300, ["age", "income", "score"]
    table = pd.DataFrame(rng.standard_normal((n, 3)).astype(np.float32), columns=numeric)
    table = table.mask(rng.random(table.shape) < 0.1)
    table["city"] = rng.choice(["paris", "lima", "oslo", "cairo", "são paulo"], n)
    table["plan"] = rng.choice(["free", "basic", "pro"], n)
    y = np.where(table["age"].fillna(0) + (table["city"] == "oslo") > 0.3, "churn", "stay")
    pre = ColumnTransformer([("num", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
                             ("city", OneHotEncoder(handle_unknown="ignore"), ["city"]),
                             ("plan", OrdinalEncoder(), ["plan"])])
    est = Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=500))]).fit(table, y)
    types = [(c, FloatTensorType([None, 1])) for c in numeric] + [(c, StringTensorType([None, 1]))
                                                                  for c in ("city", "plan")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = skl2onnx.to_onnx(est, initial_types=types, options={id(est.steps[-1][1]): {"zipmap": zipmap}},
                                 target_opset={"": 17, "ai.onnx.ml": 3})
    return model, table


def _rows(table, rows):
    feeds = {c: table[c].to_numpy(np.float32)[rows].reshape(-1, 1) for c in ("age", "income", "score")}
    feeds.update({c: table[c].to_numpy(object)[rows].reshape(-1, 1) for c in ("city", "plan")})
    return feeds


@pytest.mark.parametrize("rows", [[0], [1], list(range(2, 9)), []])
def test_sklearn_string_pipeline_as_onnxruntime(rows):
    model, table = _string_pipeline()
    sess = ml.InferenceSession(model.SerializeToString())
    feeds = _rows(table, rows)
    if rows:  # an unseen city and a missing number
        feeds["city"][0, 0], feeds["income"][0, 0] = "quito", np.nan
    want = _ort_run(model, feeds)
    for _ in range(3):  # the run that plans, then the session's quick runs
        label, proba = sess.run(None, feeds)
        assert label.dtype == object and list(label) == list(want[0])
        np.testing.assert_allclose(proba, want[1], rtol=1e-5, atol=1e-6)
    plans = [p for p in sess._runnable.pieces[0].runnable.plans.values() if hasattr(p, "steps")]
    assert plans, "the pipeline runs as one native plan, strings and labels included"
    assert {"OneHotEncoder", "LabelEncoder", "LinearClassifier"} <= {s.op.op_type for s in plans[0].steps}
    # fed as numpy 'U' arrays: the same
    u = {k: v.astype(np.str_) if v.dtype == object else v for k, v in feeds.items()}
    label, proba = sess.run(None, u)
    assert list(label) == list(want[0])


def test_sklearn_string_pipeline_with_zipmap_as_onnxruntime():
    """With ZipMap (skl2onnx's default): everything before it is one native plan, the
    labels passed on by an Identity named after the run; the maps made in Python."""
    model, table = _string_pipeline(zipmap=True)
    sess = ml.InferenceSession(model.SerializeToString())
    feeds = _rows(table, [0, 1, 2])
    want = _ort_run(model, feeds)
    for _ in range(3):
        label, maps = sess.run(None, feeds)
        assert list(label) == list(want[0])
        assert [sorted(m) for m in maps] == [sorted(m) for m in want[1]]
        for m, w in zip(maps, want[1]):
            np.testing.assert_allclose([m[k] for k in sorted(m)], [w[k] for k in sorted(w)], rtol=1e-5, atol=1e-6)
    prefix = sess._runnable.pieces[0].runnable._prefix
    assert prefix is not None and any(hasattr(p, "steps") for p in prefix.plans.values())


# -- a torch-exported bidirectional LSTM stack with sequence_lens ------------------------------------

def _torch_lstm(seq, batch, features, hidden, layers=2, seed=0):
    rng = np.random.default_rng(seed)
    nodes, inits, n = [], [], [0]

    def const(value):
        n[0] += 1
        inits.append(numpy_helper.from_array(np.asarray(value), f"c{n[0]}"))
        return f"c{n[0]}"

    def node(op, ins, n_out=1, **attrs):
        n[0] += 1
        outs = [f"{op.lower()}{n[0]}_{k}" for k in range(n_out)]
        nodes.append(helper.make_node(op, ins, outs, **attrs))
        return outs if n_out > 1 else outs[0]

    x, f, hs, cs = "x", features, [], []
    lens = node("Cast", ["lengths"], to=T.INT32)
    for layer in range(layers):
        w = const((rng.standard_normal((2, 4 * hidden, f)) / hidden ** 0.5).astype(np.float32))
        r = const((rng.standard_normal((2, 4 * hidden, hidden)) / hidden ** 0.5).astype(np.float32))
        b = const((rng.uniform(-1, 1, (2, 8 * hidden)) / hidden ** 0.5).astype(np.float32))
        h0, c0 = (node("Slice", [s, const([2 * layer]), const([2 * layer + 2]), const([0])]) for s in ("h0", "c0"))
        y, yh, yc = node("LSTM", [x, w, r, b, lens, h0, c0], 3, hidden_size=hidden, direction="bidirectional")
        x = node("Reshape", [node("Transpose", [y], perm=[0, 2, 1, 3]), const(np.array([0, 0, -1], np.int64))])
        f = 2 * hidden
        hs.append(yh)
        cs.append(yc)
    outputs = [x, node("Concat", hs, axis=0), node("Concat", cs, axis=0)]
    graph = helper.make_graph(
        nodes, "lstm", [helper.make_tensor_value_info("x", T.FLOAT, [seq, batch, features]),
                        helper.make_tensor_value_info("h0", T.FLOAT, [2 * layers, batch, hidden]),
                        helper.make_tensor_value_info("c0", T.FLOAT, [2 * layers, batch, hidden]),
                        helper.make_tensor_value_info("lengths", T.INT64, [batch])],
        [helper.make_tensor_value_info(o, T.FLOAT, None) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    feeds = {"x": rng.standard_normal((seq, batch, features)).astype(np.float32),
             "h0": (rng.standard_normal((2 * layers, batch, hidden)) * 0.1).astype(np.float32),
             "c0": (rng.standard_normal((2 * layers, batch, hidden)) * 0.1).astype(np.float32),
             "lengths": np.linspace(seq, 1, batch).astype(np.int64) if batch > 1 else np.array([seq - 3])}
    return model, feeds


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("threads", [1, 2])
def test_torch_bidirectional_lstm_with_lengths_as_onnxruntime(batch, threads):
    model, feeds = _torch_lstm(seq=12, batch=batch, features=32, hidden=64)
    want = _ort_run(model, feeds)
    options = ml.SessionOptions()
    options.intra_op_num_threads = threads
    sess = ml.InferenceSession(model.SerializeToString(), options)
    for _ in range(2):
        got = sess.run(None, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    lengths = feeds["lengths"]
    for b, n in enumerate(lengths):  # past a sequence's end: zeros, as onnxruntime gives
        assert not got[0][n:, b].any()
