"""The low-precision element types (float8 E4M3FN / E4M3FNUZ / E5M2 / E5M2FNUZ / E8M0,
float4 E2M1, int4 / uint4 / int2 / uint2; half.c, cast.c, quantize.c) against
onnx.reference bit for bit: Cast / CastLike both ways with `saturate` and
`round_mode`, QuantizeLinear outputs and DequantizeLinear inputs.  A float cast to
an integer out of its range is undefined in ONNX: there the tests expect mlrt's rule
(tests/undefined.py, docs/undefined.md), not the oracle's value."""

import warnings

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, make_model, run_mlrt, run_reference  # noqa: F401
from undefined import expected_cast

rng = np.random.default_rng(0)
FLOAT8 = [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ]
LOW_INTS = [T.UINT4, T.INT4, T.UINT2, T.INT2]
LOW = FLOAT8 + LOW_INTS + [T.FLOAT4E2M1, T.FLOAT8E8M0]
PLAIN = [T.FLOAT, T.DOUBLE, T.FLOAT16, T.BFLOAT16, T.INT8, T.INT32, T.INT64, T.UINT8, T.BOOL]


def _floats(n=4000):
    """Random bit patterns (NaN payloads, denormals, huge values), normal values at every
    scale, the boundaries of every format, ties, and the edge values."""
    bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    scaled = rng.standard_normal(n).astype(np.float32) * np.float32(10.0) ** rng.integers(-8, 8, n).astype(np.float32)
    grid = np.arange(-600, 600, 0.125, dtype=np.float32)
    special = np.array([448, 464, 470, 480, 240, 248, 57344, 61440, 65536, 6, 7, 5, 0.25, 2.0 ** -127,
                        2.0 ** 127 * 1.5, 1e-45], np.float32)
    return np.concatenate([bits, scaled, grid, special, -special, EDGE_VALUES])


def _bits(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def _same(model, inputs):
    got = run_mlrt(model, inputs)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = run_reference(model, inputs)[0]
    if model.graph.node[0].op_type in ("Cast", "CastLike"):
        expected = expected_cast(inputs[0], expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    bad = np.nonzero(_bits(got).ravel() != _bits(expected).ravel())[0]
    assert bad.size == 0, f"{bad.size} differ, e.g. got {_bits(got).ravel()[bad[:4]]}, " \
                          f"expected {_bits(expected).ravel()[bad[:4]]}"
    return got


def _codes(t):
    """Every valid code of a low-precision type, as an array of that type."""
    n = 4 if t in (T.UINT2, T.INT2) else 16 if t in (T.UINT4, T.INT4, T.FLOAT4E2M1) else 256
    return np.arange(n, dtype=np.uint8).view(helper.tensor_dtype_to_np_dtype(t))


@pytest.mark.parametrize("to", LOW)
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_to_low(to, saturate):
    x = _floats()
    modes = ["up", "down", "nearest"] if to == T.FLOAT8E8M0 else ["up"]
    with np.errstate(all="ignore"):
        sources = [x, x.astype(np.float64) * 1.0000001, x.astype(np.float16),
                   rng.integers(-1000, 1000, 300).astype(np.int32), rng.integers(-2 ** 40, 2 ** 40, 300),
                   np.arange(256, dtype=np.uint8), np.array([True, False])]
    for mode in modes:
        for src in sources:
            _same(make_model("Cast", [src], {"to": to, "saturate": saturate, "round_mode": mode}, opset=25), [src])


@pytest.mark.parametrize("src", LOW)
def test_cast_from_low(src):
    x = _codes(src)
    for to in PLAIN + ([src] if src not in LOW_INTS + [T.FLOAT8E8M0] else []):
        _same(make_model("Cast", [x], {"to": to}, opset=25), [x])
    for to in FLOAT8:  # low float -> float8 without saturation too (ml_dtypes has no e8m0 -> float8)
        if src not in LOW_INTS + [T.FLOAT8E8M0]:
            _same(make_model("Cast", [x], {"to": to, "saturate": 0}, opset=25), [x])


@pytest.mark.parametrize("n", EDGE_SIZES + (0,))
def test_cast_sizes(n):
    x = (rng.standard_normal((n,)) * 100).astype(np.float32)
    for to in (T.FLOAT8E4M3FN, T.INT4, T.FLOAT4E2M1):
        y = _same(make_model("Cast", [x], {"to": to}, opset=21), [x])
        _same(make_model("Cast", [y], {"to": T.FLOAT}, opset=21), [y])
    s = np.array(300.0, np.float32)  # rank 0
    _same(make_model("Cast", [s], {"to": T.FLOAT8E5M2}, opset=19), [s])


@pytest.mark.parametrize("opset", [13, 19, 21, 25])
def test_old_opsets_and_castlike(opset):
    x = _floats(200)
    for to in FLOAT8 + LOW_INTS:
        like = np.zeros(2, helper.tensor_dtype_to_np_dtype(to))
        if opset >= 19:
            _same(make_model("CastLike", [x, like], {"saturate": 0}, opset=opset), [x, like])
        if opset >= 21 or to in FLOAT8 and opset >= 19:
            _same(make_model("CastLike", [x, like], opset=opset), [x, like])
            _same(make_model("Cast", [x], {"to": to}, opset=opset), [x])


@pytest.mark.parametrize("to", FLOAT8 + LOW_INTS + [T.FLOAT4E2M1])
@pytest.mark.parametrize("saturate", [1, 0])
def test_quantize(to, saturate):
    dt = helper.tensor_dtype_to_np_dtype(to)
    edge = EDGE_VALUES[np.abs(EDGE_VALUES) < 1e30]  # beyond int32 the reference's rint().astype(int32) is undefined
    x = np.concatenate([(rng.standard_normal(300) * 20).astype(np.float32), edge,
                        np.array([np.inf, -np.inf, np.nan], np.float32) if to in FLOAT8 else []]).astype(np.float32)
    attrs = {"saturate": saturate} if to in FLOAT8 else {}
    # per tensor, with and without a zero point
    zp = np.zeros((), dt) if to in FLOAT8 else np.array(1, np.uint8).view(dt).reshape(())
    for scale in (np.float32(0.5), np.float32(3.0)):
        _same(make_model("QuantizeLinear", [x, scale, zp], attrs, opset=21), [x, scale, zp])
    _same(make_model("QuantizeLinear", [x, np.float32(0.25)], {**attrs, "output_dtype": to}, opset=21),
          [x, np.float32(0.25)])
    # per axis, blocked
    x2 = (rng.standard_normal((3, 8)) * 10).astype(np.float32)
    s = np.array([0.5, 1.0, 2.0], np.float32)
    z = np.zeros(3, dt)
    _same(make_model("QuantizeLinear", [x2, s, z], {**attrs, "axis": 0}, opset=21), [x2, s, z])
    sb = np.abs(rng.standard_normal((3, 2))).astype(np.float32) + 0.1
    zb = np.zeros((3, 2), dt)
    _same(make_model("QuantizeLinear", [x2, sb, zb], {**attrs, "axis": 1, "block_size": 4}, opset=21), [x2, sb, zb])
    # float16 x and scale, double x
    _same(make_model("QuantizeLinear", [x.astype(np.float16), np.float16(0.5), zp], attrs, opset=21),
          [x.astype(np.float16), np.float16(0.5), zp])


@pytest.mark.parametrize("src", FLOAT8 + LOW_INTS + [T.FLOAT4E2M1])
def test_dequantize(src):
    q = _codes(src)
    if src in FLOAT8:
        q = q[np.isfinite(q.astype(np.float32))]
    scale = np.float32(0.75)
    _same(make_model("DequantizeLinear", [q, scale], opset=21), [q, scale])
    zp = np.zeros((), q.dtype) if src in FLOAT8 + [T.FLOAT4E2M1] else np.array(1, np.uint8).view(q.dtype).reshape(())
    _same(make_model("DequantizeLinear", [q, scale, zp], opset=21), [q, scale, zp])
    _same(make_model("DequantizeLinear", [q, np.float16(0.75), zp], opset=21), [q, np.float16(0.75), zp])
    q2 = q[: (q.size // 4) * 4].reshape(4, -1)
    s = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    _same(make_model("DequantizeLinear", [q2, s], {"axis": 0}, opset=21), [q2, s])
    empty = q[:0]
    _same(make_model("DequantizeLinear", [empty, scale], opset=21), [empty, scale])


def test_bad_input():
    x = np.ones(3, np.float32)
    with pytest.raises(mlrt.MlrtError, match="round_mode"):
        run_mlrt(make_model("Cast", [x], {"to": T.FLOAT8E8M0, "round_mode": "sideways"}, opset=25), [x])
    with pytest.raises(mlrt.NotImplemented):  # float6 has no element type
        run_mlrt(make_model("Cast", [x], {"to": T.FLOAT6E3M2}, opset=25), [x])
    with pytest.raises(mlrt.MlrtError):  # x may not be int4
        q = np.zeros(3, ml_dtypes.int4)
        run_mlrt(make_model("QuantizeLinear", [q, np.float32(1)], opset=21), [q, np.float32(1)])
    with pytest.raises(mlrt.MlrtError, match="zero point"):  # zero point type differs from x's
        q, z = np.zeros(3, ml_dtypes.int4), np.zeros((), ml_dtypes.uint4)
        run_mlrt(make_model("DequantizeLinear", [q, np.float32(1), z], opset=21), [q, np.float32(1), z])


def test_large_parallel():
    x = (rng.standard_normal((300, 700)) * 50).astype(np.float32)
    for to in (T.FLOAT8E4M3FN, T.UINT4, T.FLOAT8E8M0):
        y = _same(make_model("Cast", [x], {"to": to}, opset=25), [x])
        _same(make_model("Cast", [y], {"to": T.FLOAT16}, opset=25), [y])
    _same(make_model("QuantizeLinear", [x, np.float32(2.0), np.zeros((), ml_dtypes.float8_e5m2)], opset=21),
          [x, np.float32(2.0), np.zeros((), ml_dtypes.float8_e5m2)])


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "int4", "uint4"])
def test_data_movement_moves_low_precision_bytes(dtype):
    """Identity / Transpose / Concat / Gather move the one-byte elements unchanged."""
    import ml_dtypes
    from oracle import make_model, run_mlrt

    t = np.dtype(getattr(ml_dtypes, dtype))
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4).astype(t)
    (y,) = run_mlrt(make_model("Transpose", [x], {"perm": [2, 0, 1]}), [x])
    assert y.dtype == t and y.view(np.uint8).tobytes() == x.transpose(2, 0, 1).view(np.uint8).tobytes()
    (y,) = run_mlrt(make_model("Concat", [x, x], {"axis": 1}), [x, x])
    np.testing.assert_array_equal(y.view(np.uint8), np.concatenate([x, x], 1).view(np.uint8))
    idx = np.array([1, 0], np.int64)
    (y,) = run_mlrt(make_model("Gather", [x, idx], {"axis": 0}), [x, idx])
    np.testing.assert_array_equal(y.view(np.uint8), x[::-1].view(np.uint8))
