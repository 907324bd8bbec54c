"""QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear against onnx.reference:
per tensor, per axis, blocked, every integer type, float16 / bfloat16 / int32 inputs,
precision and output_dtype, ties (half to even), saturation, opsets 10..23.
DynamicQuantizeLinear also bit for bit against onnxruntime, and where the spec leaves
it open (an empty range, NaN) against mlrt's rule (docs/undefined.md, tests/undefined.py)."""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, assert_same, check_node, make_model, run_mlrt, run_reference
from undefined import dynamic_quantize

rng = np.random.default_rng(0)
OPSETS = (10, 13, 19, 21, 23, None)
RANGES = {np.uint8: (0, 255), np.int8: (-128, 127), np.uint16: (0, 65535), np.int16: (-32768, 32767)}


@pytest.mark.parametrize("n", EDGE_SIZES + (0,))
def test_quantize_sizes(n):
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    check_node("QuantizeLinear", [x, np.float32(0.7), np.uint8(128)])
    check_node("QuantizeLinear", [x, np.float32(0.7)])  # no zero point: uint8


@pytest.mark.parametrize("opset", OPSETS)
def test_quantize_ties_round_half_to_even(opset):
    x = np.arange(-20, 20, 0.5, dtype=np.float32)
    (y,) = check_node("QuantizeLinear", [x, np.float32(1.0), np.uint8(10)], opset=opset)
    assert y[x == 0.5][0] == 10 and y[x == 1.5][0] == 12 and y[x == -0.5][0] == 10
    check_node("QuantizeLinear", [x, np.float32(0.5), np.int8(-3)], opset=opset)


@pytest.mark.parametrize("dtype", list(RANGES))
def test_quantize_types_and_saturation(dtype):
    x = (rng.standard_normal(300) * 1e5).astype(np.float32)
    x[:4] = [1e9, -1e9, 3e7, -3e7]  # far outside every range, inside int32 after rounding
    zp = np.array(RANGES[dtype][0] // 2 + RANGES[dtype][1] // 3, dtype)
    (y,) = check_node("QuantizeLinear", [x, np.float32(3.0), zp], opset=21)
    assert y[0] == RANGES[dtype][1] and y[1] == RANGES[dtype][0]


def test_quantize_rank0_and_edge_values():
    check_node("QuantizeLinear", [np.array(3.7, np.float32), np.float32(0.5), np.int8(1)])
    finite = EDGE_VALUES[np.isfinite(EDGE_VALUES) & (np.abs(EDGE_VALUES) < 1e6)]
    check_node("QuantizeLinear", [finite, np.float32(1e-3), np.int8(0)])
    tiny = np.array([0.0, 1e-40, -1e-40, 3e-40, 1e-45], np.float32)
    check_node("QuantizeLinear", [tiny, np.float32(1e-40), np.int8(0)])  # denormal x and scale


def test_quantize_nonfinite_saturates():
    """onnx.reference casts inf / NaN to int32 first (undefined: INT_MIN on x86); mlrt
    saturates like the spec: +inf -> max, -inf -> min, NaN -> min."""
    x = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    model = make_model("QuantizeLinear", [x, np.float32(1.0), np.int8(0)])
    (y,) = run_mlrt(model, [x, np.float32(1.0), np.int8(0)])
    np.testing.assert_array_equal(y, np.array([127, -128, -128, 1], np.int8))
    # the same inside the vector loop (16 at a time), for both 8-bit types
    x = (rng.standard_normal(67) * 50).astype(np.float32)
    x[20:23] = [np.inf, -np.inf, np.nan]
    for zp, lo, hi in ((np.int8(-5), -128, 127), (np.uint8(9), 0, 255)):
        (y,) = run_mlrt(make_model("QuantizeLinear", [x, np.float32(0.5), zp]), [x, np.float32(0.5), zp])
        assert list(y[20:23]) == [hi, lo, lo]
        finite = np.isfinite(x)
        want = np.clip(np.rint(x[finite] / np.float32(0.5)) + int(zp), lo, hi)
        np.testing.assert_array_equal(y[finite], want.astype(zp.dtype))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_quantize_per_axis(axis):
    x = (rng.standard_normal((3, 5, 7)) * 10).astype(np.float32)
    n = x.shape[axis]
    scale = (rng.random(n) + 0.1).astype(np.float32)
    zp = rng.integers(-20, 20, n).astype(np.int8)
    check_node("QuantizeLinear", [x, scale, zp], {"axis": axis}, opset=13)
    check_node("QuantizeLinear", [x, scale], {"axis": axis})


@pytest.mark.parametrize("axis,block", [(0, 1), (1, 2), (1, 3), (1, 5), (1, 8), (2, 4), (-1, 7)])
def test_quantize_blocked(axis, block):
    x = (rng.standard_normal((3, 5, 7)) * 10).astype(np.float32)
    shape = list(x.shape)
    shape[axis] = -(-shape[axis] // block)
    scale = (rng.random(shape) + 0.1).astype(np.float32)
    zp = rng.integers(0, 255, shape).astype(np.uint8)
    check_node("QuantizeLinear", [x, scale, zp], {"axis": axis, "block_size": block}, opset=21)
    check_node("QuantizeLinear", [x, scale], {"axis": axis, "block_size": block, "output_dtype": TensorProto.INT16})


@pytest.mark.parametrize("xt,st,opset", [(np.float16, np.float16, 19), (ml_dtypes.bfloat16, ml_dtypes.bfloat16, 21),
                                          (np.float32, ml_dtypes.bfloat16, 23), (np.float32, np.float16, 23),
                                          (np.int32, np.float32, 21), (np.float16, np.float32, 23)])
def test_quantize_input_types(xt, st, opset):
    x = (rng.standard_normal(200) * 100).astype(np.float32)
    if xt == np.int32:
        x = x * 1000
    check_node("QuantizeLinear", [x.astype(xt), np.array(0.7, st), np.int16(-3)], opset=opset)


@pytest.mark.parametrize("precision", [TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.BFLOAT16])
def test_quantize_precision(precision):
    x = (rng.standard_normal(300) * 300).astype(np.float32)
    check_node("QuantizeLinear", [x, np.float32(0.37), np.int16(5)], {"precision": precision}, opset=23)


def test_quantize_bad_inputs():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(mlrt.MlrtError, match="per-axis"):
        run_mlrt(make_model("QuantizeLinear", [x, np.ones(3, np.float32)], {"axis": 1}), [x, np.ones(3, np.float32)])
    with pytest.raises(mlrt.MlrtError, match="block_size"):
        s = np.ones((3, 3), np.float32)
        run_mlrt(make_model("QuantizeLinear", [x, s], {"axis": 1, "block_size": 2}), [x, s])
    with pytest.raises(mlrt.MlrtError, match="zero point"):
        s, z = np.ones(4, np.float32), np.zeros(3, np.uint8)
        run_mlrt(make_model("QuantizeLinear", [x, s, z], {"axis": 1}), [x, s, z])
    with pytest.raises(mlrt.MlrtError, match="output_dtype"):
        run_mlrt(make_model("QuantizeLinear", [x, np.float32(1), np.uint8(0)], {"output_dtype": TensorProto.INT8}),
                 [x, np.float32(1), np.uint8(0)])
    with pytest.raises(mlrt.NotImplemented, match="float6"):
        run_mlrt(make_model("QuantizeLinear", [x, np.float32(1)], {"output_dtype": TensorProto.FLOAT6E2M3}),
                 [x, np.float32(1)])


def check_old_opset(op_type, inputs, attrs, opset, reference_opset=19):
    """onnx.reference starts DequantizeLinear at opset 19 (same semantics before)."""
    if opset is None or opset >= reference_opset:
        return check_node(op_type, inputs, attrs, opset=opset)
    got = run_mlrt(make_model(op_type, inputs, attrs, opset=opset), inputs)
    expected = run_reference(make_model(op_type, inputs, attrs, opset=reference_opset), inputs)
    for g, e in zip(got, expected):
        assert_same(g, e, 0, 0, op_type)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_dequantize_per_tensor(opset, dtype):
    q = rng.integers(*RANGES[dtype], (4, 9), endpoint=True).astype(dtype)
    check_old_opset("DequantizeLinear", [q, np.float32(0.3), np.array(7, dtype)], {}, opset)
    check_old_opset("DequantizeLinear", [q, np.float32(0.3)], {}, opset)


@pytest.mark.parametrize("dtype", [np.uint16, np.int16, np.int32])
def test_dequantize_wide_types(dtype):
    lo, hi = RANGES.get(dtype, (-2 ** 31, 2 ** 31 - 1))
    q = rng.integers(lo, hi, 257, endpoint=True).astype(dtype)
    check_node("DequantizeLinear", [q, np.float32(0.3), np.array(hi // 3, dtype)], opset=21)
    check_node("DequantizeLinear", [q, np.float32(1e-3)], opset=21)


@pytest.mark.parametrize("n", (0, 1, 13, 127))
def test_dequantize_sizes_and_scalar(n):
    q = rng.integers(0, 255, n).astype(np.uint8)
    check_node("DequantizeLinear", [q, np.float32(0.3), np.uint8(3)])
    check_node("DequantizeLinear", [np.array(200, np.uint8), np.float32(0.3), np.uint8(3)])


def test_dequantize_axis_and_blocked():
    q = rng.integers(0, 255, (3, 5, 7)).astype(np.uint8)
    for axis in (0, 1, -1):
        n = q.shape[axis]
        check_old_opset("DequantizeLinear", [q, rng.random(n).astype(np.float32),
                                             rng.integers(0, 255, n).astype(np.uint8)], {"axis": axis}, 13)
    for axis, block in ((1, 2), (2, 4), (0, 3)):
        shape = list(q.shape)
        shape[axis] = -(-shape[axis] // block)
        check_node("DequantizeLinear", [q, rng.random(shape).astype(np.float32),
                                        rng.integers(0, 255, shape).astype(np.uint8)],
                   {"axis": axis, "block_size": block}, opset=21)


@pytest.mark.parametrize("scale_type,out", [(np.float16, 0), (ml_dtypes.bfloat16, 0), (np.float32, TensorProto.FLOAT16),
                                            (np.float32, TensorProto.BFLOAT16), (np.float16, TensorProto.FLOAT)])
def test_dequantize_float_types(scale_type, out):
    q = rng.integers(-128, 127, 300).astype(np.int8)
    attrs = {"output_dtype": out} if out else {}
    check_node("DequantizeLinear", [q, np.array(0.0123, scale_type), np.int8(-5)], attrs, opset=23)
    qi = rng.integers(-2 ** 31, 2 ** 31 - 1, 300).astype(np.int32)
    check_node("DequantizeLinear", [qi, np.array(0.0123, scale_type), np.int32(77)], attrs, opset=23)


def test_dequantize_bad_inputs():
    q = np.zeros((2, 3), np.uint8)
    with pytest.raises(mlrt.MlrtError, match="zero point"):
        run_mlrt(make_model("DequantizeLinear", [q, np.float32(1), np.int8(0)]), [q, np.float32(1), np.int8(0)])
    with pytest.raises(mlrt.MlrtError, match="per-axis"):
        s = np.ones(2, np.float32)
        run_mlrt(make_model("DequantizeLinear", [q, s], {"axis": 1}), [q, s])
    with pytest.raises(mlrt.NotImplemented, match="float6"):
        x = np.zeros(4, ml_dtypes.float6_e2m3fn)
        run_mlrt(make_model("DequantizeLinear", [x, np.float32(1)]), [x, np.float32(1)])


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_dynamic_quantize_sizes(n):
    check_node("DynamicQuantizeLinear", [(rng.standard_normal(n) * 5).astype(np.float32)], n_outputs=3)


DQL_VALUES = [np.abs(rng.standard_normal((3, 4))).astype(np.float32) + 1,
              -np.abs(rng.standard_normal((3, 4))).astype(np.float32) - 1,
              np.array(2.5, np.float32), np.full((13,), 3.0, np.float32), np.full((2, 2), -7.5, np.float32),
              np.array([0.0, 1e-40, -1e-40, 3.4e38, -3.4e38], np.float32),
              np.array([-127.5, 0, 127.5, 1.5, 2.5, -0.5], np.float32),  # x / scale and the zero point on halves
              (np.arange(-300, 300) * 0.5).astype(np.float32),
              (rng.standard_normal(200_000) * 3).astype(np.float32)]
DQL_OPEN = [np.zeros((2, 2), np.float32), np.zeros((0, 3), np.float32), np.array([1.0, np.nan, -2.0], np.float32),
            np.array([np.nan, np.nan], np.float32), np.r_[rng.standard_normal(5000), np.nan].astype(np.float32),
            # NaNs inside the vector loops (the range's and the quantization's), not only in their tails
            np.r_[rng.standard_normal(100), np.nan, rng.standard_normal(300) * 7, np.nan, np.ones(70)].astype(np.float32)]


@pytest.mark.parametrize("x", DQL_VALUES)
def test_dynamic_quantize_values(x):
    check_node("DynamicQuantizeLinear", [x], n_outputs=3)


@pytest.mark.parametrize("x", DQL_OPEN)
def test_dynamic_quantize_empty_range_and_nan(x):
    """Where the spec divides by zero or says nothing (docs/undefined.md)."""
    y, scale, zp = run_mlrt(make_model("DynamicQuantizeLinear", [x], n_outputs=3), [x])
    wy, ws, wz = dynamic_quantize(x)
    np.testing.assert_array_equal(y, wy)
    assert scale.dtype == np.float32 and scale.tobytes() == ws.tobytes() and zp == wz


@pytest.mark.parametrize("x", DQL_VALUES + DQL_OPEN + [(rng.standard_normal(n) * 4).astype(np.float32)
                                                       for n in (1, 2, 13, 127)]
                         + [np.array([1.0, np.inf, -2.0], np.float32), np.array([1.0, -np.inf, 2.0], np.float32),
                            np.r_[rng.standard_normal(200), np.inf, rng.standard_normal(200)].astype(np.float32)])
def test_dynamic_quantize_matches_onnxruntime(x):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the oracle where the spec leaves DQL open")
    model = make_model("DynamicQuantizeLinear", [x], n_outputs=3)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: x})
    got = run_mlrt(model, [x])
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.asarray(g).tobytes() == np.asarray(w).tobytes(), (g, w)


@pytest.mark.parametrize("n", [4095, 8193, 12_500, 70_001, 140_000])
def test_dynamic_quantize_range_chunks(n):
    """The range pass cuts x into chunks, one per thread or more (from 4096 floats), each
    its own minimum and maximum: the extremes found wherever they lie (the first and last
    element, either side of a chunk's edge), on 1, 2 and 3 threads."""
    import mlrt.lowlevel as ml
    for spot in (0, n - 1, 4095, 4096, n // 2, n // 3 + 1):
        x = (rng.standard_normal(n) * 2).astype(np.float32)
        x[spot % n], x[(spot * 7 + 1) % n] = -50.0, 80.0
        model = make_model("DynamicQuantizeLinear", [x], n_outputs=3)
        wy, ws, wz = dynamic_quantize(x)
        for threads in (1, 2, 3):
            options = ml.SessionOptions()
            options.intra_op_num_threads = threads
            y, scale, zp = run_mlrt(model, [x], sess_options=options)
            assert scale.tobytes() == ws.tobytes() and zp == wz, (spot, threads)
            np.testing.assert_array_equal(y, wy)


def test_dynamic_quantize_quotients_on_halves():
    """x / scale on the AVX-512 path is a product corrected by fused multiply-adds, which must
    be the division's float exactly: values placed on and one float either side of every
    half-way quotient, over ranges of many magnitudes (0.5 flips the rounding)."""
    for k, (lo, hi) in enumerate([(-1.0, 1.0), (-3e-3, 7e-2), (-250.0, 5.0), (0.0, 1e6), (-1e-20, 3e-20),
                                  (-7.1, 0.0), (-1e30, 1e31)] + [tuple(sorted(rng.standard_normal(2) * 10.0 ** e))
                                                                 for e in range(-8, 9)]):
        lo, hi = np.float32(min(lo, 0.0)), np.float32(max(hi, 0.0))
        scale = np.float32((hi - lo) / np.float32(255))
        halves = ((np.arange(-256, 256) + 0.5) * np.float64(scale)).astype(np.float32)
        x = np.concatenate([[lo, hi], halves, np.nextafter(halves, np.float32(np.inf)),
                            np.nextafter(halves, np.float32(-np.inf))]).astype(np.float32)
        x = np.clip(x, lo, hi)  # (the range stays [lo, hi]: the same scale)
        y, got_scale, zp = run_mlrt(make_model("DynamicQuantizeLinear", [x], n_outputs=3), [x])
        wy, ws, wz = dynamic_quantize(x)
        assert got_scale.tobytes() == ws.tobytes() and zp == wz, k
        np.testing.assert_array_equal(y, wy, err_msg=f"range {k}: [{lo}, {hi}]")


def test_dynamic_quantize_bad_input():
    x = np.ones(3, np.float64)
    with pytest.raises(mlrt.MlrtError, match="float32"):
        run_mlrt(make_model("DynamicQuantizeLinear", [x], n_outputs=3), [x])
