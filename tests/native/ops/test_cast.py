"""Cast and CastLike (cast.c) against onnx.reference: every pair of numeric types,
bool and float16, rounding to nearest even, NaN/inf, every opset's form, bad input."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
TYPES = INTS + FLOATS + [np.bool_]


def _to(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _values(dtype):
    """Values of `dtype` whose conversion to every other type is defined (no float
    out of an integer type's range: ONNX leaves that undefined)."""
    if dtype == np.bool_:
        return np.array([True, False, True])
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return np.array(sorted({0, 1, 2, 100, info.max, info.min, info.max // 3} | {v for v in (255, 256) if v <= info.max}), dtype)
    return np.array([0.0, -0.0, 0.4, 0.5, 1.5, 2.5, 100.9, 127.0, 1.0, 65.25], dtype)


@pytest.mark.parametrize("src", TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("dst", TYPES, ids=lambda t: np.dtype(t).name)
def test_every_pair(src, dst):
    x = _values(src)
    with np.errstate(over="ignore"):
        check_node("Cast", [x], {"to": _to(dst)}, rtol=0, atol=0)


@pytest.mark.parametrize("dst", [np.float16, np.float32, np.float64, np.bool_])
def test_special_float_values(dst):
    for src in FLOATS:
        with np.errstate(over="ignore"):
            x = EDGE_VALUES.astype(src)
        check_node("Cast", [x], {"to": _to(dst)}, rtol=0, atol=0)


def test_rounding_to_float16_and_float32():
    # ties, values next to ties, subnormals, overflow to inf
    h = np.arange(0, 65536, 97, dtype=np.uint16).view(np.float16).astype(np.float64)
    h = h[np.isfinite(h)]
    x = np.concatenate([h * (1 + 2.0 ** -11), h * (1 + 2.0 ** -12), h * (1 - 2.0 ** -12), h * (1 + 2.0 ** -30),
                        [65504.0, 65519.99, 65520.0, 1e6, 2.0 ** -25, 2.0 ** -25 * 1.0001, 2.0 ** -24 * 1.5, 1e-300]])
    check_node("Cast", [x], {"to": TensorProto.FLOAT16}, rtol=0, atol=0)
    check_node("Cast", [x.astype(np.float32)], {"to": TensorProto.FLOAT16}, rtol=0, atol=0)
    check_node("Cast", [x * 1e30], {"to": TensorProto.FLOAT}, rtol=0, atol=0)


def _cast(x, to):
    model = make_model("Cast", [x], {"to": to})
    return run_mlrt(model, [x])[0]


def test_float16_rows_give_the_scalar_bits():
    """float16 <-> float32 run a row at a time on F16C / NEON where the CPU has them: every
    half bit pattern, and float32 patterns of every kind, give the bits mlrt defines --
    numpy's rounding to nearest even, and a NaN keeps its sign and top payload bits
    (0x7c01 where none are left) without the quiet bit the hardware would set."""
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    got = _cast(h.view(np.float16)[:65533], TensorProto.FLOAT).view(np.uint32)  # (a length past whole vectors)
    hh = h[:65533].astype(np.uint32)
    nan = (hh & 0x7C00) == 0x7C00
    want = np.where(nan, ((hh & 0x8000) << 16) | 0x7F800000 | ((hh & 0x3FF) << 13),
                    h[:65533].view(np.float16).astype(np.float32).view(np.uint32))
    assert np.array_equal(got, want)

    bits = np.random.default_rng(5).integers(0, 2 ** 32, 200_001, dtype=np.uint64).astype(np.uint32)
    bits[::7] |= 0x7F800000  # inf and NaN of every payload (signaling ones among them), beside finite values
    bits[3::11] = (bits[3::11] & 0x80000000) | 0x7F800001  # a payload only below the half's bits
    x = bits.view(np.float32)
    got = _cast(x, TensorProto.FLOAT16).view(np.uint16)
    nan = np.isnan(x)
    top = ((bits >> 16) & 0x8000) | 0x7C00 | ((bits >> 13) & 0x3FF)
    top = np.where((top & 0x3FF) == 0, top | 1, top).astype(np.uint16)
    with np.errstate(over="ignore"):
        want = np.where(nan, top, x.astype(np.float16).view(np.uint16))
    assert np.array_equal(got, want)


def test_float_to_int_truncates():
    x = np.array([-2.9, -2.5, -0.5, 0.5, 2.5, 2.9, 100.99, -100.99], np.float32)
    for dst in [np.int8, np.int16, np.int32, np.int64]:
        check_node("Cast", [x], {"to": _to(dst)})
    check_node("Cast", [np.abs(x)], {"to": TensorProto.UINT8})


def test_int_wraps_and_large_to_float():
    x = np.array([200, -200, 70000, -1, 2**40 + 3], np.int64)
    for dst in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]:
        check_node("Cast", [x], {"to": _to(dst)})
    big = np.array([2**53 + 1, 2**63 - 1, -2**63, 2**24 + 1, 16777219], np.int64)
    check_node("Cast", [big], {"to": TensorProto.FLOAT}, rtol=0, atol=0)
    check_node("Cast", [big], {"to": TensorProto.DOUBLE}, rtol=0, atol=0)
    check_node("Cast", [big.view(np.uint64)], {"to": TensorProto.FLOAT}, rtol=0, atol=0)


def test_sizes_and_shapes():
    for n in EDGE_SIZES:
        check_node("Cast", [rng.standard_normal(n).astype(np.float32)], {"to": TensorProto.FLOAT16}, rtol=0, atol=0)
    check_node("Cast", [np.array(3.7, np.float64)], {"to": TensorProto.INT32})
    check_node("Cast", [np.zeros((0, 4), np.int32)], {"to": TensorProto.FLOAT})
    check_node("Cast", [rng.standard_normal((200, 300))], {"to": TensorProto.FLOAT})
    check_node("Cast", [rng.standard_normal((2, 3, 4))], {"to": TensorProto.DOUBLE})   # same type: a copy


def test_cast_opset1_type_name():
    x = np.array([1.5, -2.5, 3.0], np.float32)
    got = run_mlrt(make_model("Cast", [x], {"to": "INT32"}, opset=1), [x])[0]
    np.testing.assert_array_equal(got, check_node("Cast", [x], {"to": TensorProto.INT32}, opset=6)[0])


@pytest.mark.parametrize("opset", [6, 9, 13, 19, 21, 23, 24])
def test_cast_opsets(opset):
    x = np.array([1.5, -2.5, np.nan, np.inf], np.float32)
    check_node("Cast", [x], {"to": TensorProto.FLOAT16}, opset=opset)
    check_node("Cast", [x], {"to": TensorProto.BOOL}, opset=opset)


@pytest.mark.parametrize("opset", [15, 19, 21, 23])
def test_castlike(opset):
    x = np.array([[1.5, -2.5], [0.0, 300.0]], np.float32)
    for like in [np.int32, np.uint8, np.float16, np.float64, np.bool_]:
        check_node("CastLike", [x, np.zeros((3,), like)], opset=opset)
    check_node("CastLike", [np.array([1, 0, 7], np.int64), np.zeros((), np.bool_)], opset=opset)


def test_bad_input():
    x = np.ones(3, np.float32)
    with pytest.raises(mlrt.MlrtError):   # strings have no C element type
        run_mlrt(make_model("Cast", [x], {"to": TensorProto.STRING}), [x])
    with pytest.raises(mlrt.MlrtError):   # float6 neither
        run_mlrt(make_model("Cast", [x], {"to": TensorProto.FLOAT6E2M3}), [x])
    with pytest.raises(mlrt.MlrtError):   # no such type
        run_mlrt(make_model("Cast", [x], {"to": 99}), [x])
