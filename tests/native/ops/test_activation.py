"""Activations (activation.c) against onnx.reference: every attribute, edge values
and sizes, float16, PRelu's slope broadcasting, Clip's bounds at every opset, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)

CASES = [  # (op, attributes, opset or None for the newest)
    ("Relu", {}, None),
    ("LeakyRelu", {}, None), ("LeakyRelu", {"alpha": 0.3}, None), ("LeakyRelu", {"alpha": -2.0}, 6),
    ("Elu", {}, None), ("Elu", {"alpha": 2.5}, None),
    ("Selu", {}, None), ("Selu", {"alpha": 2.0, "gamma": 3.0}, None),
    ("Celu", {}, None), ("Celu", {"alpha": 2.0}, None),
    ("HardSigmoid", {}, None), ("HardSigmoid", {"alpha": 0.5, "beta": 0.6}, None),
    ("HardSwish", {}, None),
    ("ThresholdedRelu", {}, None), ("ThresholdedRelu", {"alpha": -0.5}, None),
    ("Mish", {}, None),
    ("Gelu", {}, 20), ("Gelu", {"approximate": "tanh"}, 20), ("Gelu", {"approximate": "none"}, None),
]
IDS = [f"{op}-{'-'.join(f'{k}={v}' for k, v in a.items())}-{o}" for op, a, o in CASES]


@pytest.mark.parametrize("op,attrs,opset", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_edge_values(op, attrs, opset, dtype):
    x = np.concatenate([EDGE_VALUES, np.linspace(-6, 6, 49, dtype=np.float32)]).astype(dtype)
    check_node(op, [x], attrs, opset=opset)


@pytest.mark.parametrize("op,attrs,opset", CASES, ids=IDS)
def test_sizes_and_shapes(op, attrs, opset):
    for n in EDGE_SIZES:
        check_node(op, [rng.standard_normal(n).astype(np.float32) * 4], attrs, opset=opset)
    check_node(op, [np.array(-1.5, np.float32)], attrs, opset=opset)   # rank 0
    check_node(op, [np.zeros((3, 0), np.float32)], attrs, opset=opset)  # empty
    check_node(op, [rng.standard_normal((2, 3, 4, 5)).astype(np.float64)], attrs, opset=opset)


@pytest.mark.parametrize("op,attrs,opset", [c for c in CASES if c[0] != "Relu"],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] != "Relu"])
def test_float16(op, attrs, opset):
    x = (rng.standard_normal((5, 13)) * 3).astype(np.float16)
    check_node(op, [x], attrs, opset=opset, rtol=5e-3, atol=5e-3)


def test_relu_integers_still_work():
    check_node("Relu", [np.array([-5, 0, 3, -128, 127], np.int8)])
    check_node("Relu", [np.array([-5, 0, 3], np.int64)])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("n", [1, 13, 127, 1000])
def test_gelu_float32_polynomial(approximate, n):
    """The float32 loop (erf / exp polynomials of fastmath.h) on the grid exporters feed it,
    with every edge value at every lane of the vector loop and its tail.  atol: the reference
    computes 1 + erf (1 + tanh) in float32, which loses up to |x|/2 * 2^-24 for x < 0."""
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.0, -10.0, 1e-40, -1e-40, 3.4e38, -3.4e38], np.float32)
    grid = np.linspace(-10, 10, 4001, dtype=np.float32)
    x = np.concatenate([np.resize(edge, n), grid])
    got = check_node("Gelu", [x], {"approximate": approximate}, opset=20, rtol=1e-6, atol=6e-7)[0]
    assert got[0] == 0 and list(np.signbit(got[:min(n, 2)])) == [False, True][:n]


def test_gelu_bad_mode():
    x = np.ones(3, np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Gelu", [x], {"approximate": "fast"}, opset=20), [x])


# -- PRelu -------------------------------------------------------------------------------

@pytest.mark.parametrize("xs,ss", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 3, 4), (3, 1)), ((2, 3, 4), ()),
                                   ((2, 3, 4), (1, 1, 1)), ((13, 127), (127,)), ((0, 4), (4,)), ((), ())])
def test_prelu_broadcast(xs, ss):
    x = rng.standard_normal(xs).astype(np.float32)
    s = rng.standard_normal(ss).astype(np.float32)
    check_node("PRelu", [x, s])


def test_prelu_one_dim_slope_lines_up_with_its_dimension():
    # a 1-D slope of length 3 meets x of shape (2, 3, 4): numpy cannot broadcast it,
    # onnx.reference (and opsets before 7) line it up with the dim of length 3
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    s = np.array([0.1, 0.2, 0.3], np.float32)
    check_node("PRelu", [x, s], opset=6)
    check_node("PRelu", [x, s])


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.int64, np.uint32, np.uint64])
def test_prelu_types(dtype):
    x = np.array([[-3, -1, 0, 2, 5]], dtype=np.float64)
    s = np.array([2, 3, 4, 5, 6], dtype=np.float64)
    check_node("PRelu", [x.astype(dtype) if np.dtype(dtype).kind != "u" else np.abs(x).astype(dtype), s.astype(dtype)])


def test_prelu_edge_values():
    check_node("PRelu", [EDGE_VALUES, np.float32(0.25) * np.ones_like(EDGE_VALUES)])


def test_prelu_bad_shapes():
    x = np.ones((2, 3), np.float32)
    s = np.ones((4,), np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("PRelu", [x, s]), [x, s])


# -- Clip --------------------------------------------------------------------------------

X = np.concatenate([EDGE_VALUES, np.linspace(-3, 3, 13, dtype=np.float32)])


@pytest.mark.parametrize("attrs", [{}, {"min": -1.0}, {"max": 0.5}, {"min": -1.0, "max": 1.0}, {"min": 1.0, "max": -1.0}])
def test_clip_attributes(attrs):
    for x in (X, X.astype(np.float64).reshape(2, 13)):
        expected = check_node("Clip", [x], attrs, opset=6)[0]
        # onnx.reference has no Clip-1; on finite float32 values it means the same as
        # Clip-6 (whose default bounds are -+FLT_MAX, where Clip-1 has none)
        got = run_mlrt(make_model("Clip", [x], attrs, opset=1), [x])[0]
        finite = ~np.isinf(x)
        if x.dtype == np.float32:
            np.testing.assert_array_equal(got[finite], expected[finite])
        if "min" not in attrs:
            assert np.isneginf(got).sum() == np.isneginf(x).sum()


@pytest.mark.parametrize("bounds", [(None, None), (-1.0, None), (None, 0.5), (-1.0, 1.0), (2.0, -2.0), (0.0, 0.0)])
@pytest.mark.parametrize("opset", [11, 12, 13])
def test_clip_inputs(bounds, opset):
    lo, hi = (None if b is None else np.array(b, np.float32) for b in bounds)
    if lo is None and hi is not None:
        inputs = [X, None, hi]  # max only: min is an empty (absent) input
    else:
        inputs = [X] + [b for b in (lo, hi) if b is not None]
    check_node("Clip", inputs, opset=opset)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float64, np.float16])
def test_clip_types(dtype):
    x = np.arange(-20, 20).astype(dtype) if np.dtype(dtype).kind != "u" else np.arange(0, 40).astype(dtype)
    lo, hi = np.array(3, dtype), np.array(11, dtype)
    check_node("Clip", [x, lo, hi])
    check_node("Clip", [x, lo])


def test_clip_sizes():
    for n in EDGE_SIZES + (0,):
        x = rng.standard_normal(n).astype(np.float32)
        check_node("Clip", [x, np.array(-0.5, np.float32), np.array(0.5, np.float32)])
    check_node("Clip", [np.array(7.0, np.float32), np.array(-0.5, np.float32), np.array(0.5, np.float32)])


def test_clip_bad_bounds():
    x = np.ones(4, np.float32)
    wide = np.array([0.0, 1.0], np.float32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Clip", [x, wide]), [x, wide])
    other = np.array(0.0, np.float64)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Clip", [x, other]), [x, other])


def test_activation_on_integers_is_refused():
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Elu", [x]), [x])
