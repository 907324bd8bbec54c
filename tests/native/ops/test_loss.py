"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnx.reference:
reductions, weights, ignore_index (negative, out of range), N-D inputs, the
log_prob output, opsets 12/13/22, float64/float16, int32 targets, edge values,
empty batches, bad input."""

import ml_dtypes
import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)
OPS = ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]
SHAPES = [(3, 5), (1, 1), (4, 13, 2), (2, 4, 3, 5), (2, 3, 2, 2, 2, 3), (127, 9)]


def scores(op, shape, dtype=np.float32):
    x = rng.standard_normal(shape) * 3
    return (x if op == "SoftmaxCrossEntropyLoss" else -np.abs(x)).astype(dtype)


def targets(shape, classes, dtype=np.int64):
    return rng.integers(0, classes, (shape[0],) + tuple(shape[2:])).astype(dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_loss_shapes(op, shape, reduction, weighted):
    inputs = [scores(op, shape), targets(shape, shape[1])]
    if weighted:
        inputs.append(rng.random(shape[1]).astype(np.float32) + 0.1)
    n_out = 2 if op == "SoftmaxCrossEntropyLoss" else 1
    check_node(op, inputs, {"reduction": reduction}, n_outputs=n_out)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ignore", [0, 2, -1, -5, 10])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_loss_ignore_index(op, ignore, reduction):
    shape = (6, 4, 5)
    t = targets(shape, 4)
    t[rng.random(t.shape) < 0.3] = ignore
    w = rng.random(4).astype(np.float32) + 0.1
    check_node(op, [scores(op, shape), t, w], {"reduction": reduction, "ignore_index": ignore})
    if op == "SoftmaxCrossEntropyLoss" or ignore != -1 or reduction != "mean":
        # (onnx.reference's NLL averages over ignored targets too when ignore_index is -1 without weights)
        check_node(op, [scores(op, shape), t], {"reduction": reduction, "ignore_index": ignore})


def test_nll_mean_skips_ignored_targets():
    x = -np.arange(6, dtype=np.float32).reshape(2, 3)
    t = np.array([2, -1])
    model = make_model("NegativeLogLikelihoodLoss", [x, t], {"ignore_index": -1})
    assert run_mlrt(model, [x, t])[0] == pytest.approx(2.0)  # only the first target counts


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [12, 13, 22])
@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16])
def test_loss_types(op, opset, dtype):
    if dtype == ml_dtypes.bfloat16 and (opset < 22 if op == OPS[0] else opset < 13):
        pytest.skip("bfloat16 is not in this opset")
    shape = (4, 6, 3)
    tol = {np.float64: 1e-7, np.float16: 2e-3}.get(dtype, 2e-2)
    check_node(op, [scores(op, shape, dtype), targets(shape, 6, np.int32), (rng.random(6) + 0.5).astype(dtype)],
               {"reduction": "mean"}, opset=min(opset, 13) if op == OPS[1] else opset, rtol=tol, atol=tol)


@pytest.mark.parametrize("op", OPS)
def test_loss_edge_values(op):
    x = np.array([[0.0, -np.inf, 1e-40, 3e38], [np.nan, 1.0, -1.0, 2.0], [-np.inf] * 4], np.float32)
    t = np.array([1, 2, 0])
    check_node(op, [x, t], {"reduction": "none"})


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_loss_empty(op, reduction):
    # (onnx.reference cannot reshape an empty batch): none -> [0], sum -> 0, mean -> 0 / 0
    inputs = [np.zeros((0, 3), np.float32), np.zeros((0,), np.int64)]
    got = run_mlrt(make_model(op, inputs, {"reduction": reduction}), inputs)[0]
    assert got.dtype == np.float32
    if reduction == "none":
        assert got.shape == (0,)
    else:
        assert got.shape == () and (got == 0 if reduction == "sum" else np.isnan(got))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("inputs,attrs", [
    ([np.zeros((2, 3), np.float32), np.array([0, 3])], {}),          # target out of range
    ([np.zeros((2, 3), np.float32), np.array([-1, 0])], {}),         # negative, not ignored
    ([np.zeros((2, 3), np.float32), np.array([0, 1, 2])], {}),       # target shape
    ([np.zeros((3,), np.float32), np.array([0])], {}),               # rank 1 scores
    ([np.zeros((2, 3), np.float32), np.array([0, 1]), np.ones(4, np.float32)], {}),  # weight size
    ([np.zeros((2, 3), np.float32), np.array([0, 1])], {"reduction": "avg"}),
    ([np.zeros((2, 3), np.float32), np.array([0.0, 1.0])], {}),      # float target
])
def test_loss_bad_input(op, inputs, attrs):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model(op, inputs, attrs), inputs)
