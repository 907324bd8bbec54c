"""LayerNormalization, InstanceNormalization, GroupNormalization (18 and 21),
MeanVarianceNormalization and LpNormalization against onnx.reference."""

import numpy as np
import pytest

import mlrt
from mlrt.native.plan.eager import run_eager
from mlrt.native.ops import lookup
from oracle import EDGE_SIZES, assert_same, check_node, make_model, run_mlrt, run_reference, tolerance

rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32, scale=1.0, shift=0.0):
    return (rng.standard_normal(shape) * scale + shift).astype(dtype)


# -- LayerNormalization ------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -2, -3, -4])
@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm_axes(axis, with_bias):
    x = randn(2, 3, 4, 5, scale=2.0, shift=1.0)
    tail = x.shape[axis:]
    inputs = [x, randn(*tail)] + ([randn(*tail)] if with_bias else [])
    check_node("LayerNormalization", inputs, {"axis": axis, "epsilon": 1e-3}, n_outputs=3)


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_layer_norm_sizes(n):
    x = randn(3, n, scale=3.0, shift=-2.0)
    check_node("LayerNormalization", [x, randn(n), randn(n)], n_outputs=3)
    check_node("LayerNormalization", [x, randn(3, n)], {"axis": 0})


def test_layer_norm_transformer_shape():
    x = randn(4, 64, 768)
    check_node("LayerNormalization", [x, randn(768), randn(768)], {"epsilon": 1e-12}, n_outputs=1)


def test_layer_norm_broadcast_scale():
    x = randn(2, 3, 4, 5)
    check_node("LayerNormalization", [x, randn(4, 1), randn(5)], {"axis": 2})
    check_node("LayerNormalization", [x, randn(1), randn(1, 1, 5)], {"axis": 1})


@pytest.mark.parametrize("scale_shape, bias_shape", [((9,), (1,)), ((1,), (9,)), ((1,), (1,)), ((1,), None),
                                                     ((9,), None), ((1, 9), (2, 9))])
def test_layer_norm_constant_scale_or_bias(scale_shape, bias_shape):
    # float32 groups that are one contiguous line take the line path, each of scale and bias
    # along the line or constant on it (a (2, 9) bias over axis 1 is neither: the general walk)
    x = randn(5, 2, 9, scale=2.0, shift=3.0)
    inputs = [x, randn(*scale_shape)] + ([randn(*bias_shape)] if bias_shape else [])
    check_node("LayerNormalization", inputs, {"axis": -1 if len(scale_shape) == 1 else 1}, n_outputs=3)


def test_layer_norm_long_lines():
    # lines longer than a block of the float32 line path's sums
    x = randn(3, 5000, scale=2.0, shift=3.0)
    check_node("LayerNormalization", [x, randn(5000), randn(5000)], n_outputs=3)
    check_node("InstanceNormalization", [randn(2, 3, 70, 70, shift=-5.0), randn(3), randn(3)])


@pytest.mark.parametrize("shift", [100.0, -1000.0])
def test_layer_norm_large_offset(shift):
    # a spread of 0.5 around a large offset: onnx.reference's float32 mean is off by up to
    # 6e-4 in the output here, so the oracle is the float64 formula; mlrt's float32 path
    # takes deviations from the line's first element and stays within a few float ulps
    x = randn(3, 5000, scale=0.5, shift=shift)
    s, b = randn(5000), randn(5000)
    y, mean, inv = run_mlrt(make_model("LayerNormalization", [x, s, b], {}, n_outputs=3), [x, s, b])
    xd = x.astype(np.float64)
    m, v = xd.mean(1, keepdims=True), xd.var(1, keepdims=True)
    np.testing.assert_allclose(y, (xd - m) / np.sqrt(v + 1e-5) * s + b, rtol=0, atol=5e-6)
    np.testing.assert_allclose(mean, m, rtol=1e-7)
    np.testing.assert_allclose(inv, 1 / np.sqrt(v + 1e-5), rtol=1e-5)


def test_layer_norm_float64_and_stats_type():
    x = randn(3, 7, dtype=np.float64)
    model = make_model("LayerNormalization", [x, randn(7, dtype=np.float64)], {}, n_outputs=3)
    y, mean, inv = run_mlrt(model, [x, np.ones(7)])
    assert y.dtype == np.float64 and mean.dtype == np.float32 and inv.dtype == np.float32  # stash_type 1
    assert mean.shape == inv.shape == (3, 1)
    np.testing.assert_allclose(mean[:, 0], x.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(y, (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
                               rtol=1e-10)
    check_node("LayerNormalization", [x, randn(7, dtype=np.float64), randn(7, dtype=np.float64)])


def test_layer_norm_constant_rows_and_empty():
    check_node("LayerNormalization", [np.full((3, 4), 2.5, np.float32), randn(4), randn(4)], n_outputs=3)
    # empty groups (NaN statistics, as the reference's): the general walk, no line to read
    check_node("LayerNormalization", [np.zeros((3, 0), np.float32), randn(0), randn(0)], n_outputs=3)
    x = np.zeros((0, 4), np.float32)
    assert run_mlrt(make_model("LayerNormalization", [x, randn(4)]), [x, randn(4)])[0].shape == (0, 4)


def test_layer_norm_bad_input():
    with pytest.raises(mlrt.MlrtError):
        check_node("LayerNormalization", [randn(2, 3), randn(4)])
    with pytest.raises(mlrt.MlrtError):
        check_node("LayerNormalization", [randn(2, 3), randn(3)], {"axis": 2})


# -- InstanceNormalization ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5), (1, 4, 2, 3, 3), (3, 2), (2, 3, 127), (1, 2, 1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_instance_norm(shape, dtype):
    x = randn(*shape, dtype=dtype, scale=2.0, shift=0.5)
    c = shape[1]
    check_node("InstanceNormalization", [x, randn(c, dtype=dtype), randn(c, dtype=dtype)], {"epsilon": 1e-2})


@pytest.mark.parametrize("opset", [6, 22])
def test_instance_norm_opsets(opset):
    x = randn(2, 3, 4, 4)
    check_node("InstanceNormalization", [x, randn(3), randn(3)], opset=opset)


def test_instance_norm_bad_scale():
    with pytest.raises(mlrt.MlrtError):
        check_node("InstanceNormalization", [randn(2, 3, 4), randn(4), randn(3)])


# -- GroupNormalization ------------------------------------------------------------------------------

GROUPS = [((2, 6, 4, 4), 3), ((2, 6, 4, 4), 1), ((2, 6, 4, 4), 6), ((3, 4, 5), 2), ((1, 8, 127), 4), ((2, 4), 2)]


@pytest.mark.parametrize("shape,groups", GROUPS)
def test_group_norm(shape, groups):
    x = randn(*shape, scale=2.0, shift=1.0)
    check_node("GroupNormalization", [x, randn(shape[1]), randn(shape[1])], {"num_groups": groups, "epsilon": 1e-3},
               opset=21)


@pytest.mark.parametrize("shape,groups", GROUPS)
def test_group_norm_18(shape, groups):
    # opset 18 (deprecated, so the ONNX checker refuses such models: run the node alone)
    # takes scale and bias per group: the same as opset 21 with them repeated per channel
    x = randn(*shape, scale=2.0, shift=1.0)
    scale, bias = randn(groups), randn(groups)
    node = make_model("GroupNormalization", [x, scale, bias], {"num_groups": groups}).graph.node[0]
    got = run_eager(lookup("", "GroupNormalization", 18)(node, 18), [x, scale, bias], None)[0]
    cpg = shape[1] // groups
    expected = check_node("GroupNormalization", [x, np.repeat(scale, cpg), np.repeat(bias, cpg)],
                          {"num_groups": groups}, opset=21)[0]
    assert_same(got, expected, *tolerance("GroupNormalization", 18))


def test_group_norm_float64():
    x = randn(2, 6, 3, 3, dtype=np.float64)
    check_node("GroupNormalization", [x, randn(6, dtype=np.float64), randn(6, dtype=np.float64)], {"num_groups": 2},
               opset=21)


def test_group_norm_bad_groups():
    with pytest.raises(mlrt.MlrtError):
        check_node("GroupNormalization", [randn(2, 6, 4), randn(6), randn(6)], {"num_groups": 4}, opset=21)
    with pytest.raises(mlrt.MlrtError):  # opset 18 wants one scale per group
        check_node("GroupNormalization", [randn(2, 6, 4), randn(6), randn(6)], {"num_groups": 3}, opset=18)


# -- MeanVarianceNormalization -----------------------------------------------------------------------

@pytest.mark.parametrize("axes", [None, [0, 2, 3], [1], [2, 3], [0, 1, 2, 3], [-1], [0, 3]])
@pytest.mark.parametrize("opset", [9, 13])
def test_mvn(axes, opset):
    x = randn(3, 4, 5, 6, scale=3.0, shift=2.0)
    check_node("MeanVarianceNormalization", [x], {} if axes is None else {"axes": axes}, opset=opset)


def test_mvn_float64_and_sizes():
    # onnx.reference cannot run the float64 function body (a float epsilon): compare to float32
    x = randn(2, 3, 4, 5, dtype=np.float64)
    got = run_mlrt(make_model("MeanVarianceNormalization", [x]), [x])[0]
    x32 = x.astype(np.float32)
    expected = run_reference(make_model("MeanVarianceNormalization", [x32]), [x32])[0]
    assert_same(got.astype(np.float32), expected, *tolerance("MeanVarianceNormalization", 13))
    for n in EDGE_SIZES:
        check_node("MeanVarianceNormalization", [randn(n, 3, scale=5.0)], {"axes": [0]})


# -- LpNormalization ----------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lp_norm_l2(axis, dtype):
    check_node("LpNormalization", [randn(3, 4, 5, dtype=dtype)], {"axis": axis, "p": 2})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_lp_norm_l1(axis):
    # onnx.reference sums x rather than |x| for p = 1, so it is given non-negative input;
    # the signed case is checked against the definition
    x = np.abs(randn(3, 4, 5))
    check_node("LpNormalization", [x], {"axis": axis, "p": 1})
    x = randn(3, 4, 5)
    got = run_mlrt(make_model("LpNormalization", [x], {"axis": axis, "p": 1}), [x])[0]
    assert_same(got, x / np.abs(x).sum(axis=axis, keepdims=True), *tolerance("LpNormalization", 22))


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_lp_norm_sizes_and_zeros(n):
    x = randn(2, n)
    x[0] = 0.0  # a zero norm gives 0, not NaN
    check_node("LpNormalization", [x], {"axis": 1, "p": 2})
    check_node("LpNormalization", [np.abs(x)], {"axis": 1, "p": 1})
    check_node("LpNormalization", [x], {"axis": 0, "p": 2}, opset=1)


def test_lp_norm_bad_p():
    with pytest.raises(mlrt.MlrtError):
        check_node("LpNormalization", [randn(2, 3)], {"p": 3})


@pytest.mark.parametrize("op, attrs, opset, n_params", [
    ("BatchNormalization", {}, 15, 4), ("InstanceNormalization", {}, 6, 2),
    ("LayerNormalization", {"axis": -1}, 17, 2), ("GroupNormalization", {"num_groups": 3}, 21, 2)])
def test_float16(op, attrs, opset, n_params):
    """Halves are normalized in float32 and rounded once: the float32 reference rounded to
    half, within one half ulp (onnx.reference's own float16 arithmetic rounds at every
    step, its mean and variance drifting by several ulps)."""
    from oracle import make_model, run_mlrt, run_reference
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float16)
    width = 5 if op == "LayerNormalization" else 3
    params = [rng.standard_normal(width).astype(np.float16) for _ in range(n_params)]
    if op == "BatchNormalization":
        params[3] = np.abs(params[3]) + np.float16(0.5)
    (got,) = run_mlrt(make_model(op, [x] + params, attrs, opset=opset), [x] + params)
    wide = [a.astype(np.float32) for a in [x] + params]
    (want,) = run_reference(make_model(op, wide, attrs, opset=opset), wide)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-3)


def test_layer_norm_float_overflow_falls_back_to_double():
    # sums or squares past float's range: the line path's float sums overflow, and the group is
    # done again in double (onnx.reference's float32 gives inf or NaN here; float64 is the oracle)
    x = np.array([[3e38, 3e38, 1, 0], [3e30, -3e30, 1, 0], [-3e38, -2e38, -3e38, 1e38], [1, 2, 3, 4]], np.float32)
    y, mean, inv = run_mlrt(make_model("LayerNormalization", [x, np.ones(4, np.float32)], {}, n_outputs=3),
                            [x, np.ones(4, np.float32)])
    xd = x.astype(np.float64)
    want = (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-5)
    assert np.isfinite(y).all()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean[:, 0], xd.mean(1), rtol=1e-6)
