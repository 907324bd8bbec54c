"""RMSNormalization, RotaryEmbedding, Swish and Shrink against onnx.reference: axes,
broadcast scales, epsilon, 3-D / 4-D rotary inputs with and without position ids,
partial and interleaved rotation, attributes, edge sizes and values, several
dtypes, bad input."""

import ml_dtypes
import numpy as np
import pytest

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


# -- RMSNormalization ---------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -2, -3, -4])
def test_rms_axes(axis):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    check_node("RMSNormalization", [x, rng.standard_normal(x.shape[axis:]).astype(np.float32)], {"axis": axis})


@pytest.mark.parametrize("scale_shape", [(5,), (1,), (4, 1), (3, 4, 5), (1, 3, 1, 5), (2, 3, 4, 5)])
def test_rms_broadcast_scale(scale_shape):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    scale = rng.standard_normal(scale_shape).astype(np.float32)
    check_node("RMSNormalization", [x, scale], {"axis": 1, "epsilon": 0.1})


@pytest.mark.parametrize("n", EDGE_SIZES + (0,))
def test_rms_sizes(n):
    x = (rng.standard_normal((3, n)) * 4).astype(np.float32)
    check_node("RMSNormalization", [x, rng.standard_normal((n,)).astype(np.float32)])


@pytest.mark.parametrize("xt,st", [(np.float64, np.float64), (np.float16, np.float16), (np.float32, np.float16),
                                   (np.float16, np.float32)])
def test_rms_types(xt, st):
    x = rng.standard_normal((4, 8)).astype(xt)
    tol = 1e-7 if xt == st == np.float64 else 3e-3
    check_node("RMSNormalization", [x, rng.standard_normal(8).astype(st)], rtol=tol, atol=tol)


def test_rms_bfloat16():
    x = rng.standard_normal((4, 8)).astype(ml_dtypes.bfloat16)
    check_node("RMSNormalization", [x, rng.standard_normal(8).astype(ml_dtypes.bfloat16)], rtol=2e-2, atol=2e-2)


def test_rms_edge_values():
    check_node("RMSNormalization", [EDGE_VALUES.reshape(1, -1), np.ones(len(EDGE_VALUES), np.float32)])
    check_node("RMSNormalization", [np.zeros((2, 3), np.float32), np.ones(3, np.float32)], {"epsilon": 0.0})


# -- RotaryEmbedding ------------------------------------------------------------------------------

def rotary_inputs(rank=4, b=2, h=3, s=5, d=8, dim=8, pos=True, positions=20, dtype=np.float32):
    x = rng.standard_normal((b, h, s, d)).astype(dtype)
    if rank == 3:
        x = x.transpose(0, 2, 1, 3).reshape(b, s, h * d)
    shape = (positions, dim // 2) if pos else (b, s, dim // 2)
    angle = rng.random(shape) * 6
    inputs = [x, np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)]
    if pos:
        inputs.append(rng.integers(0, positions, (b, s)).astype(np.int64))
    return inputs


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("dim", [0, 2, 4, 8])
@pytest.mark.parametrize("pos", [True, False])
def test_rotary(rank, interleaved, dim, pos):
    attrs = {"interleaved": interleaved, "rotary_embedding_dim": dim, **({"num_heads": 3} if rank == 3 else {})}
    check_node("RotaryEmbedding", rotary_inputs(rank, dim=dim or 8, pos=pos), attrs)


@pytest.mark.parametrize("b,h,s,d", [(1, 1, 1, 2), (1, 2, 13, 6), (2, 4, 127, 16), (0, 2, 3, 4), (2, 2, 0, 4)])
def test_rotary_sizes(b, h, s, d):
    check_node("RotaryEmbedding", rotary_inputs(b=b, h=h, s=s, d=d, dim=d), {})
    check_node("RotaryEmbedding", rotary_inputs(b=b, h=h, s=s, d=d, dim=d, pos=False), {"interleaved": 1})


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_rotary_half_types(dtype):
    check_node("RotaryEmbedding", rotary_inputs(dtype=dtype), {}, rtol=1e-3, atol=1e-3)
    check_node("RotaryEmbedding", rotary_inputs(dtype=dtype, pos=False, dim=4),
               {"interleaved": 1, "rotary_embedding_dim": 4}, rtol=1e-3, atol=1e-3)


def test_rotary_edge_values():
    inputs = rotary_inputs(b=1, h=1, s=len(EDGE_VALUES), d=2, dim=2)
    inputs[0][0, 0, :, 0] = EDGE_VALUES
    check_node("RotaryEmbedding", inputs, {})


@pytest.mark.parametrize("case", ["position out of range", "odd dim", "dim too large", "3-D without heads",
                                  "cache width", "cache type"])
def test_rotary_bad_input(case):
    inputs, attrs = rotary_inputs(), {}
    if case == "position out of range":
        inputs[3][0, 0] = 20
    elif case == "odd dim":
        attrs = {"rotary_embedding_dim": 3}
    elif case == "dim too large":
        attrs = {"rotary_embedding_dim": 10}
    elif case == "3-D without heads":
        inputs = rotary_inputs(rank=3)
    elif case == "cache width":
        inputs[1] = inputs[1][:, :3].copy()
        inputs[2] = inputs[2][:, :3].copy()
    else:
        inputs[1] = inputs[1].astype(np.float64)
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("RotaryEmbedding", inputs, attrs), inputs)


# -- Swish and Shrink -------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [1.0, 0.5, -2.0, 0.0])
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_swish(alpha, n):
    check_node("Swish", [(rng.standard_normal(n) * 4).astype(np.float32)], {"alpha": alpha})


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16])
def test_swish_types(dtype):
    tol = 1e-7 if dtype == np.float64 else 1e-2
    check_node("Swish", [(rng.standard_normal((3, 7)) * 4).astype(dtype)], {"alpha": 0.7}, rtol=tol, atol=tol)


def test_swish_edge_values():
    check_node("Swish", [EDGE_VALUES], {})
    check_node("Swish", [np.array(2.5, np.float32)], {})  # rank 0


@pytest.mark.parametrize("attrs", [{}, {"lambd": 1.5}, {"lambd": 1.5, "bias": 1.5}, {"lambd": 0.0, "bias": -1.0}])
@pytest.mark.parametrize("n", EDGE_SIZES)
def test_shrink(attrs, n):
    check_node("Shrink", [(rng.standard_normal(n) * 3).astype(np.float32)], attrs)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.uint16])
def test_shrink_types(dtype):
    x = rng.integers(0 if np.dtype(dtype).kind == "u" else -50, 50, (4, 9)).astype(dtype)
    check_node("Shrink", [x], {"lambd": 2.0, "bias": 1.0})


def test_shrink_edge_values():
    check_node("Shrink", [EDGE_VALUES], {"lambd": 0.5, "bias": 0.25})
    check_node("Shrink", [np.zeros((0, 3), np.float32)], {})


@pytest.mark.parametrize("op", ["Swish", "Shrink"])
def test_elementwise_bad_type(op):
    x = np.array([True, False])
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model(op, [x], {}), [x])
