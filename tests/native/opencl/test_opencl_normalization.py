"""Normalizations on OpenCL against the C kernels: BatchNormalization (parameters at run
time and as initializers, spatial=0, opset variants), InstanceNormalization and
LayerNormalization (axes, broadcast scale and bias, the Mean / InvStdDev outputs)."""

import numpy as np
import pytest
from onnx import helper

from mlrt.native.opencl._recorders import find_recorder
from opencl_check import check_opencl, run_opencl
from oracle import make_model, run_mlrt

rng = np.random.default_rng(0)


def _x(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _bn_params(shape, dtype=np.float32):
    scale, bias, mean = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    return [scale, bias, mean, (rng.random(shape) + 0.1).astype(dtype)]


# -- BatchNormalization ------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1), (3, 13), (2, 13, 7, 9), (1, 127, 5), (2, 3, 1, 1), (1, 5, 2, 3, 4),
                                   (2, 4, 33, 17)])
@pytest.mark.parametrize("opset", [9, 15])
def test_batchnorm_runtime_parameters(shape, opset):
    """scale, B, mean and var fed at run time: folded on the device."""
    check_opencl("BatchNormalization", [_x(*shape)] + _bn_params(shape[1]), {"epsilon": 1e-3}, opset=opset)


def _run_with_initializers(op_type, x, params, attrs, opset):
    """The node with every input after X an initializer (folded ahead on the host)."""
    check_opencl(op_type, [x] + params, attrs, opset=opset, constants=range(1, len(params) + 1))


@pytest.mark.parametrize("shape", [(3, 13), (2, 13, 7, 9), (1, 64, 56, 56)])
def test_batchnorm_initializers(shape):
    _run_with_initializers("BatchNormalization", _x(*shape), _bn_params(shape[1]), {"epsilon": 1e-5}, 9)


def test_batchnorm_double_parameters():
    """From opset 15 scale/B and mean/var may be another float type than X."""
    x = _x(2, 5, 4, 4)
    p = _bn_params(5)
    _run_with_initializers("BatchNormalization", x, p[:2] + [q.astype(np.float64) for q in p[2:]], {}, 15)


@pytest.mark.parametrize("shape", [(2, 5, 3, 4), (3, 13, 7)])
def test_batchnorm_per_element(shape):
    """spatial=0 (before opset 9): parameters per channel and position."""
    check_opencl("BatchNormalization", [_x(*shape)] + _bn_params(shape[1:]), {"spatial": 0}, opset=7)


def test_batchnorm_edge_values():
    x = np.tile(np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 1e-40, 3e38, -3e38], np.float32), (2, 3, 1))
    check_opencl("BatchNormalization", [x] + _bn_params(3))


def test_batchnorm_training_refused():
    supports = find_recorder("", "BatchNormalization").supports
    from mlrt.native.ops import lookup
    for opset, outputs, attrs in [(14, 3, {"training_mode": 1}), (9, 5, {}), (7, 3, {})]:
        node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], [f"y{i}" for i in range(outputs)],
                                **attrs)
        assert not supports(lookup("", "BatchNormalization", opset)(node, opset), [None] * 5)
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])
    assert supports(lookup("", "BatchNormalization", 15)(node, 15), [None] * 5)


# -- InstanceNormalization ---------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 13, 7, 9), (1, 127, 3), (3, 5), (1, 3, 200, 100), (2, 2, 3, 4, 5),
                                   (1, 4, 1, 13)])
@pytest.mark.parametrize("epsilon", [1e-5, 0.5])
def test_instancenorm(shape, epsilon):
    c = shape[1]
    check_opencl("InstanceNormalization", [_x(*shape, scale=3) + 2, _x(c), _x(c)], {"epsilon": epsilon})


def test_instancenorm_large_values():
    x = _x(2, 3, 50, scale=1e4) + 1e5
    check_opencl("InstanceNormalization", [x, _x(3), _x(3)], rtol=1e-3, atol=1e-3)


# -- LayerNormalization ------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, -2, 1, 0, 3])
@pytest.mark.parametrize("with_bias", [True, False])
def test_layernorm_axes(axis, with_bias):
    x = _x(2, 13, 7, 9, scale=2) + 1
    norm_shape = x.shape[axis:]
    inputs = [x, _x(*norm_shape)] + ([_x(*norm_shape)] if with_bias else [])
    check_opencl("LayerNormalization", inputs, {"axis": axis, "epsilon": 1e-3}, opset=17)


@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (5, 13), (4, 127), (512, 768), (2, 3, 1000)])
def test_layernorm_sizes(shape):
    check_opencl("LayerNormalization", [_x(*shape), _x(shape[-1]), _x(shape[-1])], opset=17)


def test_layernorm_broadcast_scale_and_bias():
    """Scale and B of fewer dims, or with size-1 dims, broadcast to the normalised dims."""
    x = _x(2, 13, 7, 9)
    check_opencl("LayerNormalization", [x, _x(1, 9), _x(7, 1)], {"axis": 2}, opset=17)
    check_opencl("LayerNormalization", [x, _x(9), _x(1, 1, 9)], {"axis": 1}, opset=17)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layernorm_statistics_outputs(axis):
    x = _x(3, 13, 17, scale=2) + 1
    s, b = _x(*x.shape[axis:]), _x(*x.shape[axis:])
    check_opencl("LayerNormalization", [x, s, b], {"axis": axis}, n_outputs=3, opset=17)
    check_opencl("LayerNormalization", [x, s], {"axis": axis}, n_outputs=2, opset=17)


def test_layernorm_only_invstddev():
    model_attrs = {"axis": -1}
    x, s = _x(4, 10), _x(10)
    model = make_model("LayerNormalization", [x, s], model_attrs, opset=17, output_names=["y", "", "inv"])
    got, expected = run_opencl(model, [x, s]), run_mlrt(model, [x, s])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_layernorm_stash_type():
    """stash_type 11 (double statistics) is refused only when the statistics are outputs."""
    from mlrt.native.ops import lookup
    supports = find_recorder("", "LayerNormalization").supports
    cls = lookup("", "LayerNormalization", 17)
    make = lambda outs: cls(helper.make_node("LayerNormalization", ["x", "s"], outs, stash_type=11), 17)  # noqa: E731
    assert supports(make(["y"]), [None])
    assert not supports(make(["y", "mean", "inv"]), [None])
    check_opencl("LayerNormalization", [_x(3, 8), _x(8)], {"stash_type": 11}, opset=17)


def test_layernorm_edge_values():
    """Constant rows, inf and NaN, and values whose squares (or sum) overflow float."""
    x = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [np.inf, 1, 2, 3], [np.nan, 1, 2, 3], [3e30, -3e30, 1, 0],
                  [3e38, 3e38, 1, 0], [-3e38, -2e38, -3e38, 1e38], [1e-40, -1e-40, 0, 1e-41],
                  [3e38, 3e38, 3e38, 3e38]], np.float32)
    for n in (4, 300):  # (300: the rescan of an overflowing sum by a whole work-group)
        xs = np.tile(x, (1, n // 4))
        check_opencl("LayerNormalization", [xs, _x(xs.shape[1]), _x(xs.shape[1])], opset=17)
        # (the mean of row 4 is all cancellation: its value depends on the order of the sum)
        check_opencl("LayerNormalization", [np.delete(xs, 4, 0), _x(xs.shape[1])], n_outputs=3, opset=17)


def test_empty():
    check_opencl("InstanceNormalization", [np.zeros((0, 3, 4), np.float32), _x(3), _x(3)])
    check_opencl("LayerNormalization", [np.zeros((0, 4), np.float32), _x(4)], opset=17)
    check_opencl("BatchNormalization", [np.zeros((0, 3, 4), np.float32)] + _bn_params(3))


# The BatchNormalization nodes of onnx/backend/test/data/light (opset 9), at shapes they see.
@pytest.mark.parametrize("shape,epsilon", [((1, 64, 112, 112), 1e-5), ((1, 1024, 7, 7), 1e-5), ((1, 160, 28, 28), 1e-5),
                                           ((1, 24, 28, 28), 1e-5)])
def test_light_model_configurations(shape, epsilon):
    _run_with_initializers("BatchNormalization", _x(*shape), _bn_params(shape[1]), {"epsilon": epsilon}, 9)


def test_float16():
    h = np.float16
    x = _x(2, 13, 7, 9).astype(h)
    check_opencl("BatchNormalization", [x] + _bn_params(13, h))
    check_opencl("InstanceNormalization", [x, _x(13).astype(h), _x(13).astype(h)])
    check_opencl("LayerNormalization", [x, _x(7, 9).astype(h), _x(9).astype(h)], {"axis": 2}, opset=17)
    check_opencl("LayerNormalization", [_x(3, 300).astype(h), _x(300).astype(h)], opset=17)
