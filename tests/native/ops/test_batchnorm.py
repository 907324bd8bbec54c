"""BatchNormalization against onnx.reference: inference at every opset (1, 6, 7, 9,
14, 15), spatial=0, training-mode statistics, float64 and mixed parameter types,
edge values, bad input.

onnx.reference runs opsets 7-13 in training mode whatever the node asks, so those
opsets are checked against the opset-15 inference result on the same inputs."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_VALUES, assert_same, check_node, make_model, run_mlrt, run_reference, tolerance

rng = np.random.default_rng(0)


def bn_inputs(shape, dtype=np.float32, pdtype=None, per_element=False):
    pdtype = pdtype or dtype
    pshape = (shape[1],) + (tuple(shape[2:]) if per_element else ())
    x = rng.standard_normal(shape).astype(dtype)
    scale = rng.standard_normal(pshape).astype(pdtype)
    bias = rng.standard_normal(pshape).astype(pdtype)
    mean = rng.standard_normal(pshape).astype(pdtype)
    var = rng.random(pshape).astype(pdtype) + 0.5
    return [x, scale, bias, mean, var]


SHAPES = [(2, 3, 4, 5), (2, 3), (1, 4, 3, 3, 3), (3, 1, 127), (1, 13, 2, 2), (0, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batchnorm_inference(shape, dtype):
    check_node("BatchNormalization", bn_inputs(shape, dtype), {"epsilon": 1e-3})


def test_batchnorm_mixed_parameter_types():
    check_node("BatchNormalization", bn_inputs((2, 3, 4, 4), np.float32, np.float64), opset=15)


@pytest.mark.parametrize("opset,attrs", [(1, {"consumed_inputs": [0, 0, 0, 1, 1], "is_test": 1}),
                                         (6, {"is_test": 1}), (7, {}), (9, {}), (14, {})])
def test_batchnorm_old_opsets(opset, attrs):
    inputs = bn_inputs((2, 3, 5, 4))
    got = run_mlrt(make_model("BatchNormalization", inputs, {**attrs, "epsilon": 1e-4}, opset=opset), inputs)[0]
    expected = run_reference(make_model("BatchNormalization", inputs, {"epsilon": 1e-4}, opset=15), inputs)[0]
    assert_same(got, expected, *tolerance("BatchNormalization", opset), where=f"opset {opset}")


def test_batchnorm_not_spatial():
    x, s, b, m, v = bn_inputs((2, 3, 4, 5), per_element=True)
    got = run_mlrt(make_model("BatchNormalization", [x, s, b, m, v], {"spatial": 0}, opset=7), [x, s, b, m, v])[0]
    expected = (x - m) / np.sqrt(v + 1e-5) * s + b  # onnx.reference has no spatial=0
    assert_same(got, expected.astype(np.float32), *tolerance("BatchNormalization", 7), where="spatial=0")


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 2), (3, 5, 7)])
@pytest.mark.parametrize("opset", [14, 15])
def test_batchnorm_training(shape, opset):
    check_node("BatchNormalization", bn_inputs(shape), {"training_mode": 1, "momentum": 0.8}, n_outputs=3,
               opset=opset)


def test_batchnorm_training_old_opset():
    inputs = bn_inputs((2, 3, 4, 5))
    y, mean, var, saved_mean, saved_var = run_mlrt(
        make_model("BatchNormalization", inputs, {"momentum": 0.8}, n_outputs=5, opset=9), inputs)
    x = inputs[0]
    m, v = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(saved_mean, m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(saved_var, v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean, inputs[3] * 0.8 + m * 0.2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var, inputs[4] * 0.8 + v * 0.2, rtol=1e-5, atol=1e-6)


def test_batchnorm_edge_values():
    x = np.resize(EDGE_VALUES, (1, 2, 13)).astype(np.float32)
    inputs = [x, np.array([1.0, 0.5], np.float32), np.array([0.0, -1.0], np.float32),
              np.array([0.0, 0.5], np.float32), np.array([1.0, 4.0], np.float32)]
    check_node("BatchNormalization", inputs)


@pytest.mark.parametrize("case", ["param_shape", "rank1", "int", "training_outputs", "spatial_training"])
def test_batchnorm_bad_input(case):
    inputs = bn_inputs((2, 3, 4))
    attrs, n_out, opset = {}, 1, 15
    if case == "param_shape":
        inputs[1] = np.ones(4, np.float32)
    elif case == "rank1":
        inputs[0] = np.ones(3, np.float32)
    elif case == "int":
        inputs[0] = np.ones((2, 3, 4), np.int32)
    elif case == "training_outputs":
        n_out = 3
    else:
        inputs = bn_inputs((2, 3, 4), per_element=True)
        attrs, n_out, opset = {"spatial": 0}, 5, 7
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("BatchNormalization", inputs, attrs, n_outputs=n_out, opset=opset), inputs)
