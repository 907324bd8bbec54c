"""LRN against onnx.reference (whose channel loop runs over the batch size, so it is
right only when N == C: those shapes use it) and onnxruntime for the others: sizes,
alpha / beta / bias, float64, edge values, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_VALUES, assert_same, check_node, make_model, run_mlrt, tolerance

rng = np.random.default_rng(0)


def check_with_ort(x, attrs):
    ort = pytest.importorskip("onnxruntime")
    model = make_model("LRN", [x], attrs, opset=13)
    model.ir_version = 8
    model.graph.output[0].type.tensor_type.elem_type = 1
    so = ort.SessionOptions()
    so.log_severity_level = 3
    expected = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"x0": x})
    assert_same(run_mlrt(model, [x])[0], expected[0], *tolerance("LRN", 13), where="LRN")


@pytest.mark.parametrize("c", [1, 2, 3, 5, 13])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_lrn_sizes(c, size):
    check_node("LRN", [rng.standard_normal((c, c, 3, 4)).astype(np.float32)], {"size": size})


@pytest.mark.parametrize("attrs", [{"size": 3, "alpha": 0.01, "beta": 0.5, "bias": 2.0},
                                   {"size": 5, "alpha": 1e-3, "beta": 1.0},
                                   {"size": 4, "alpha": 2e-3, "beta": 0.9, "bias": 1.5},
                                   {"size": 5, "beta": 0.75}])
def test_lrn_attributes(attrs):
    check_node("LRN", [rng.standard_normal((4, 4, 5, 6)).astype(np.float32)], attrs)
    check_node("LRN", [rng.standard_normal((4, 4, 5, 6))], attrs)


@pytest.mark.parametrize("shape", [(1, 96, 27, 27), (2, 16, 7, 3), (1, 64, 1, 1)])
def test_lrn_shapes(shape):
    check_with_ort(rng.standard_normal(shape).astype(np.float32), {"size": 5, "alpha": 1e-4, "beta": 0.75})


@pytest.mark.parametrize("shape", [(2, 16, 7), (1, 10, 3, 4, 5), (2, 5)])
def test_lrn_other_ranks(shape):
    # both oracles are 4-D only; LRN only mixes channels, so the 4-D result of the same data must agree
    x = rng.standard_normal(shape).astype(np.float32)
    x4 = x.reshape(shape[0], shape[1], -1, 1)
    got = run_mlrt(make_model("LRN", [x], {"size": 3}), [x])[0]
    check_with_ort(x4, {"size": 3})
    expected = run_mlrt(make_model("LRN", [x4], {"size": 3}), [x4])[0].reshape(shape)
    assert_same(got, expected, 0, 0, where="LRN")


def test_lrn_edge_values():
    x = np.resize(EDGE_VALUES, (13, 13, 1, 1)).astype(np.float32)
    check_node("LRN", [x], {"size": 3})


def test_lrn_empty():
    check_node("LRN", [np.ones((0, 3, 2, 2), np.float32)], {"size": 3})


@pytest.mark.parametrize("shape,attrs", [((3,), {"size": 3}), ((1, 3, 2, 2), {"size": 0}),
                                         ((1, 3, 2, 2), {})])
def test_lrn_bad_input(shape, attrs):
    x = np.ones(shape, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("LRN", [x], attrs), [x])
