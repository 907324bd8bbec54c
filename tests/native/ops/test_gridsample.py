"""GridSample against onnx.reference: linear / nearest / cubic, zeros / border /
reflection padding, align_corners, 1-D, 2-D and 3-D, grid values inside and outside
[-1, 1] and on the corners, float32/float64 and mixed grid types, nearest on integer
types; opset 16 (bilinear / bicubic names, 2-D only); empty outputs; bad input."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)
MODES = ["linear", "nearest", "cubic"]
PADDING = ["zeros", "border", "reflection"]


def grid(shape, lo=-1.3, hi=1.3, dtype=np.float32):
    g = rng.uniform(lo, hi, shape).astype(dtype)
    flat = g.reshape(-1)
    flat[:6] = np.array([-1, 1, 0, -1, 1, 0.5])[: min(6, flat.size)]
    return g


def x_of(shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", PADDING)
@pytest.mark.parametrize("mode", MODES)
def test_2d(mode, padding, align):
    check_node("GridSample", [x_of((2, 3, 5, 6)), grid((2, 4, 7, 2))],
               {"mode": mode, "padding_mode": padding, "align_corners": align}, opset=20)


@pytest.mark.parametrize("padding", PADDING)
@pytest.mark.parametrize("mode", MODES)
def test_3d_and_1d(mode, padding):
    attrs = {"mode": mode, "padding_mode": padding}
    check_node("GridSample", [x_of((1, 2, 3, 4, 5)), grid((1, 2, 3, 4, 3))], attrs, opset=22)
    check_node("GridSample", [x_of((2, 2, 7)), grid((2, 9, 1), -2.5, 2.5)], {**attrs, "align_corners": 1}, opset=20)


def test_far_outside_and_single_pixel():
    for mode in MODES:
        for padding in PADDING:
            attrs = {"mode": mode, "padding_mode": padding}
            check_node("GridSample", [x_of((1, 1, 4, 5)), grid((1, 3, 3, 2), -9.0, 9.0)], attrs, opset=20)
            check_node("GridSample", [x_of((1, 2, 1, 1)), grid((1, 2, 3, 2))], attrs, opset=20)


@pytest.mark.parametrize("mode", MODES)
def test_types(mode):
    check_node("GridSample", [x_of((1, 2, 5, 4), np.float64), grid((1, 3, 3, 2), dtype=np.float64)],
               {"mode": mode, "padding_mode": "reflection"}, opset=20)
    check_node("GridSample", [x_of((1, 2, 5, 4)), grid((1, 3, 3, 2), dtype=np.float64)], {"mode": mode}, opset=20)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.float16])
def test_nearest_integer_types(dtype):
    x = (rng.integers(0, 100, (1, 2, 5, 4))).astype(dtype)
    for padding in PADDING:
        check_node("GridSample", [x, grid((1, 3, 3, 2))], {"mode": "nearest", "padding_mode": padding}, opset=20)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_float16(mode):
    """onnx.reference computes float16 in float16; compare with its float32 result instead."""
    x, g = x_of((1, 2, 5, 4)).astype(np.float16), grid((1, 3, 3, 2))
    got = run_mlrt(make_model("GridSample", [x, g], {"mode": mode}, opset=22), [x, g])[0]
    want = check_node("GridSample", [x.astype(np.float32), g], {"mode": mode}, opset=22)[0]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=2e-2)


def test_nan_propagates():
    x = x_of((1, 1, 4, 4))
    x[0, 0, 1, 2] = np.nan
    check_node("GridSample", [x, grid((1, 5, 5, 2), -1.0, 1.0)], {"mode": "linear"}, opset=20)


@pytest.mark.parametrize("old,new", [("bilinear", "linear"), ("nearest", "nearest"), ("bicubic", "cubic")])
def test_opset_16_names(old, new):
    """onnx.reference only knows the opset-20 names; opset 16 must act the same."""
    x, g = x_of((2, 2, 5, 6)), grid((2, 3, 4, 2))
    for padding in PADDING:
        attrs = {"padding_mode": padding, "align_corners": 1}
        got = run_mlrt(make_model("GridSample", [x, g], {**attrs, "mode": old}, opset=16), [x, g])[0]
        want = check_node("GridSample", [x, g], {**attrs, "mode": new}, opset=20)[0]
        np.testing.assert_array_equal(got, want)


def test_large_block_split():
    """More positions than one block of taps (1024 for 2-D linear, 64 for 3-D cubic)."""
    check_node("GridSample", [x_of((2, 2, 16, 16)), grid((2, 30, 40, 2))], {"mode": "linear"}, opset=20)
    check_node("GridSample", [x_of((1, 1, 6, 6, 6)), grid((1, 5, 5, 6, 3))], {"mode": "cubic"}, opset=20)


def test_empty():
    for x, g, shape in [(x_of((0, 2, 4, 4)), grid((0, 3, 3, 2)), (0, 2, 3, 3)),
                        (x_of((1, 0, 4, 4)), grid((1, 3, 3, 2)), (1, 0, 3, 3)),
                        (x_of((1, 2, 4, 4)), grid((1, 0, 3, 2)), (1, 2, 0, 3))]:
        got = run_mlrt(make_model("GridSample", [x, g], opset=20), [x, g])[0]
        assert got.shape == shape and got.dtype == np.float32


@pytest.mark.parametrize("inputs,attrs,opset", [
    ([x_of((1, 1, 4, 4)), grid((1, 3, 3, 3))], {}, 20),                     # grid's last axis is not 2
    ([x_of((1, 1, 4, 4)), grid((2, 3, 3, 2))], {}, 20),                     # batch differs
    ([x_of((1, 1, 4, 4)), grid((1, 3, 3, 2))], {"mode": "bilinear"}, 20),   # opset-16 name at 20
    ([x_of((1, 1, 4, 4)), grid((1, 3, 3, 2))], {"mode": "linear"}, 16),     # opset-20 name at 16
    ([x_of((1, 1, 4, 4)), grid((1, 3, 3, 2))], {"padding_mode": "wrap"}, 20),
    ([x_of((1, 1, 4, 4, 4)), grid((1, 3, 3, 3, 3))], {}, 16),               # 3-D before opset 20
    ([x_of((1, 1, 4, 4)), np.zeros((1, 3, 3, 2), np.int64)], {}, 20),       # integer grid
    ([np.zeros((1, 1, 4, 4), np.int32), grid((1, 3, 3, 2))], {"mode": "linear"}, 20),  # linear on ints
    ([x_of((1, 1, 4, 4)), grid((1, 3, 3, 2)).astype(np.float16)], {}, 22),    # float16 grid
])
def test_bad(inputs, attrs, opset):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("GridSample", inputs, attrs, opset=opset), inputs)
