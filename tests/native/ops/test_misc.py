"""CumProd, BitCast, GlobalLpPool, MaxRoiPool, TensorScatter and ImageDecoder:
against onnx.reference where it has the op, against the definition where it has not."""

import io

import numpy as np
import pytest
from onnx import TensorProto

import mlrt
from oracle import EDGE_SIZES, EDGE_VALUES, check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


def run(op, inputs, attrs=None, opset=None):
    return run_mlrt(make_model(op, inputs, attrs, opset=opset), inputs)[0]


# -- CumProd ------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumprod_flags(axis, exclusive, reverse):
    x = rng.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    check_node("CumProd", [x, np.array(axis, np.int64)], {"exclusive": exclusive, "reverse": reverse}, opset=26)


@pytest.mark.parametrize("n", EDGE_SIZES)
def test_cumprod_sizes(n):
    x = rng.uniform(0.9, 1.1, (2, n)).astype(np.float64)
    check_node("CumProd", [x, np.array(1, np.int32)], {}, opset=26)
    check_node("CumProd", [rng.uniform(0.9, 1.1, (n, 300)).astype(np.float32), np.array(0)], {"reverse": 1}, opset=26)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_cumprod_ints_wrap(dtype):
    x = rng.integers(1, 1000, (4, 9)).astype(dtype)
    check_node("CumProd", [x, np.array(1, np.int64)], {}, opset=26)
    check_node("CumProd", [x, np.array(0, np.int64)], {"exclusive": 1, "reverse": 1}, opset=26)


def test_cumprod_edges_and_bad():
    check_node("CumProd", [np.tile(EDGE_VALUES, (2, 1)), np.array(1)], {}, opset=26)
    h = rng.uniform(0.5, 1.5, (3, 7)).astype(np.float16)
    np.testing.assert_array_equal(run("CumProd", [h, np.array(1)], opset=26), np.cumprod(h, axis=1))
    check_node("CumProd", [np.zeros((0, 3), np.float32), np.array(1)], {}, opset=26)
    with pytest.raises(mlrt.MlrtError):
        run("CumProd", [np.ones((2, 3), np.float32), np.array(2)], opset=26)
    with pytest.raises(mlrt.MlrtError):
        run("CumProd", [np.ones((2, 3), np.float32), np.array(0.5, np.float32)], opset=26)


# -- BitCast ------------------------------------------------------------------------------------

@pytest.mark.parametrize("src,to", [(np.float32, TensorProto.INT32), (np.int32, TensorProto.FLOAT),
                                    (np.float64, TensorProto.UINT64), (np.uint16, TensorProto.FLOAT16),
                                    (np.float16, TensorProto.BFLOAT16), (np.int8, TensorProto.BOOL),
                                    (np.bool_, TensorProto.UINT8), (np.int64, TensorProto.DOUBLE)])
def test_bitcast(src, to):
    raw = rng.integers(0, 2 if src == np.bool_ or to == TensorProto.BOOL else 256, 13 * np.dtype(src).itemsize,
                       dtype=np.uint8)
    x = raw.view(src).reshape(13)
    got = run("BitCast", [x], {"to": to}, opset=26)
    assert got.tobytes() == x.tobytes() and got.shape == x.shape
    if to != TensorProto.BFLOAT16:
        check_node("BitCast", [x], {"to": to}, opset=26)


def test_bitcast_shapes_and_bad():
    check_node("BitCast", [EDGE_VALUES.reshape(1, 13)], {"to": TensorProto.UINT32}, opset=26)
    check_node("BitCast", [np.array(1.5, np.float32)], {"to": TensorProto.INT32}, opset=26)
    check_node("BitCast", [np.zeros((0, 4), np.int16)], {"to": TensorProto.UINT16}, opset=26)
    with pytest.raises(mlrt.MlrtError):
        run("BitCast", [np.ones(3, np.float32)], {"to": TensorProto.DOUBLE}, opset=26)
    with pytest.raises(mlrt.MlrtError):
        run("BitCast", [np.ones(3, np.float32)], {"to": TensorProto.STRING}, opset=26)


# -- GlobalLpPool (onnx.reference has none: checked against the definition) ----------------------

@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 13), (2, 3, 5, 7), (1, 2, 4, 4, 3), (2, 2)])
def test_global_lp_pool(p, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    got = run("GlobalLpPool", [x], {"p": p}, opset=22)
    axes = tuple(range(2, x.ndim))
    want = (np.abs(x.astype(np.float64)) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
    assert got.shape == shape[:2] + (1,) * (len(shape) - 2) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_global_lp_pool_opset1_float_p_and_types():
    x = rng.standard_normal((2, 3, 6, 6))
    got = run("GlobalLpPool", [x], {"p": 2.5}, opset=1)
    np.testing.assert_allclose(got, (np.abs(x) ** 2.5).sum(axis=(2, 3), keepdims=True) ** 0.4, rtol=1e-12)
    y = run("GlobalLpPool", [np.array([[[np.inf, 1.0]], [[np.nan, 1.0]]], np.float32)], {}, opset=22)
    assert y[0, 0, 0] == np.inf and np.isnan(y[1, 0, 0])
    with pytest.raises(mlrt.MlrtError):
        run("GlobalLpPool", [np.ones(3, np.float32)], {}, opset=22)


# -- MaxRoiPool (onnx.reference has none: checked against the Caffe definition) -------------------

def roi_pool_definition(x, rois, pooled, scale):
    out = np.zeros((len(rois), x.shape[1], *pooled), x.dtype)
    H, W = x.shape[2:]
    rnd = lambda v: int(np.floor(abs(v) + 0.5) * np.sign(v))  # noqa: E731  (round half away from zero)
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        sw, sh, ew, eh = rnd(x1 * scale), rnd(y1 * scale), rnd(x2 * scale), rnd(y2 * scale)
        bh, bw = max(eh - sh + 1, 1) / pooled[0], max(ew - sw + 1, 1) / pooled[1]
        for ph in range(pooled[0]):
            hs = min(max(int(np.floor(ph * bh)) + sh, 0), H)
            he = min(max(int(np.ceil((ph + 1) * bh)) + sh, 0), H)
            for pw in range(pooled[1]):
                ws = min(max(int(np.floor(pw * bw)) + sw, 0), W)
                we = min(max(int(np.ceil((pw + 1) * bw)) + sw, 0), W)
                if he > hs and we > ws:
                    out[r, :, ph, pw] = x[int(b), :, hs:he, ws:we].max(axis=(1, 2))
    return out


@pytest.mark.parametrize("pooled,scale", [((2, 2), 1.0), ((3, 4), 0.5), ((1, 1), 1.0), ((7, 7), 0.25)])
def test_max_roi_pool(pooled, scale):
    x = rng.standard_normal((2, 3, 13, 17)).astype(np.float32)
    rois = np.array([[0, 0, 0, 12, 16], [1, 2.4, 3.5, 9, 8], [1, -5, -5, 40, 40], [0, 6, 6, 6, 6],
                     [1, 30, 30, 50, 50]], np.float32)
    rois[:, 1:] /= scale
    got = run("MaxRoiPool", [x, rois], {"pooled_shape": list(pooled), "spatial_scale": scale}, opset=22)
    np.testing.assert_array_equal(got, roi_pool_definition(x, rois, pooled, scale))


def test_max_roi_pool_bad():
    x = np.zeros((1, 2, 4, 4), np.float32)
    with pytest.raises(mlrt.MlrtError):  # batch index out of range
        run("MaxRoiPool", [x, np.array([[1, 0, 0, 2, 2]], np.float32)], {"pooled_shape": [2, 2]}, opset=22)
    with pytest.raises(mlrt.MlrtError):
        run("MaxRoiPool", [x, np.zeros((1, 4), np.float32)], {"pooled_shape": [2, 2]}, opset=22)
    with pytest.raises(mlrt.MlrtError):
        run("MaxRoiPool", [x, np.zeros((1, 5), np.float32)], {}, opset=22)


# -- TensorScatter --------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("axis", [-2, 1, 2])
def test_tensor_scatter(mode, axis):
    past = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    shape = list(past.shape)
    shape[axis] = 2
    update = rng.standard_normal(shape).astype(np.float32)
    n = past.shape[axis]
    idx = np.array([0, n - 2] if mode == "linear" else [n - 1, 3], np.int64)
    check_node("TensorScatter", [past, update, idx], {"mode": mode, "axis": axis}, opset=24)
    check_node("TensorScatter", [past, update], {"mode": mode, "axis": axis}, opset=24)


def test_tensor_scatter_types_and_bad():
    past = rng.integers(0, 9, (3, 4, 2)).astype(np.int8)
    check_node("TensorScatter", [past, np.ones((3, 4, 2), np.int8), np.zeros(3, np.int64)], {"axis": 1}, opset=24)
    check_node("TensorScatter", [past, np.ones((3, 0, 2), np.int8)], {"axis": 1}, opset=24)
    check_node("TensorScatter", [np.zeros((0, 4, 2), np.float32), np.zeros((0, 1, 2), np.float32)], {"axis": 1},
               opset=24)
    strings = np.array([["a", "b", "c"], ["d", "e", "f"]], dtype=object)
    got = run("TensorScatter", [strings, np.array([["x"], ["y"]], dtype=object), np.array([2, 1], np.int64)],
              {"axis": 1}, opset=24)
    np.testing.assert_array_equal(got, [["a", "b", "x"], ["d", "y", "f"]])
    with pytest.raises(mlrt.MlrtError):  # does not fit in linear mode
        run("TensorScatter", [past, np.ones((3, 2, 2), np.int8), np.array([0, 3, 0], np.int64)], {"axis": 1},
            opset=24)
    with pytest.raises(mlrt.MlrtError):
        run("TensorScatter", [past, np.ones((3, 5, 2), np.int8)], {"axis": 1}, opset=24)
    with pytest.raises(mlrt.MlrtError):
        run("TensorScatter", [past, np.ones((3, 1, 2), np.int8)], {"axis": 0}, opset=24)


# -- ImageDecoder ---------------------------------------------------------------------------------

def encoded(fmt, mode="RGB", size=(13, 9), **kw):
    from PIL import Image
    pixels = rng.integers(0, 256, (size[1], size[0], len(mode)) if mode != "L" else (size[1], size[0]),
                          dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels, mode).save(buf, format=fmt, **kw)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


@pytest.mark.parametrize("fmt", ["PNG", "BMP", "JPEG", "TIFF", "PPM"])
@pytest.mark.parametrize("pixel_format", ["RGB", "BGR", "Grayscale"])
def test_image_decoder(fmt, pixel_format):
    data = encoded(fmt, quality=90) if fmt == "JPEG" else encoded(fmt)
    out = check_node("ImageDecoder", [data], {"pixel_format": pixel_format}, opset=20)[0]
    assert out.shape == (9, 13, 1 if pixel_format == "Grayscale" else 3) and out.dtype == np.uint8


def test_image_decoder_modes_and_bad_streams():
    gray = encoded("PNG", "L")
    assert run("ImageDecoder", [gray], {}, opset=20).shape == (9, 13, 3)       # RGB of a gray image
    rgba = encoded("PNG", "RGBA")
    assert run("ImageDecoder", [rgba], {"pixel_format": "BGR"}, opset=20).shape == (9, 13, 3)
    junk = np.frombuffer(b"not an image at all", np.uint8).copy()
    assert run("ImageDecoder", [junk], {}, opset=20).shape == (0, 0, 3)        # undecodable: empty
    cut = encoded("PNG")[:40]
    assert run("ImageDecoder", [cut], {"pixel_format": "Grayscale"}, opset=20).shape == (0, 0, 1)
    with pytest.raises(mlrt.MlrtError):
        run("ImageDecoder", [gray], {"pixel_format": "CMYK"}, opset=20)
    with pytest.raises(mlrt.MlrtError):
        run("ImageDecoder", [gray.astype(np.int32)], {}, opset=20)


# -- SwiGLU -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", EDGE_SIZES)
def test_swiglu_sizes(n):
    a, b = rng.standard_normal((2, n)).astype(np.float32), rng.standard_normal((2, n)).astype(np.float32)
    check_node("SwiGLU", [a, b], {}, opset=28)
    check_node("SwiGLU", [a.astype(np.float64), b.astype(np.float64)], {"alpha": 1.702}, opset=28)


def test_swiglu_edges_types_and_bad():
    check_node("SwiGLU", [EDGE_VALUES, np.ones(13, np.float32)], {"alpha": 0.5}, opset=28)
    check_node("SwiGLU", [np.array(2.0, np.float32), np.array(3.0, np.float32)], {}, opset=28)
    h = rng.standard_normal((3, 40)).astype(np.float16)
    # float16 rounds after every step like numpy; glibc's expf and numpy's exp may differ by an ulp
    check_node("SwiGLU", [h, h[::-1].copy()], {}, opset=28, rtol=2e-3, atol=1e-4)
    with pytest.raises(mlrt.MlrtError):
        run("SwiGLU", [np.ones((2, 3), np.float32), np.ones((1, 3), np.float32)], opset=28)  # no broadcasting


# -- CausalConvWithState ------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 4, 9])
@pytest.mark.parametrize("length", [1, 3, 13])
@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv(k, length, activation):
    x = rng.standard_normal((2, 3, length)).astype(np.float32)
    w = rng.standard_normal((3, 1, k)).astype(np.float32)
    bias, past = rng.standard_normal(3).astype(np.float32), rng.standard_normal((2, 3, k - 1)).astype(np.float32)
    attrs = {"activation": activation}
    check_node("CausalConvWithState", [x, w], attrs, n_outputs=2, opset=27)
    check_node("CausalConvWithState", [x, w, bias, past], attrs, n_outputs=2, opset=27)
    check_node("CausalConvWithState", [x, w, None, past], attrs, n_outputs=2, opset=27)


def test_causal_conv_decode_matches_prefill_and_bad():
    x = rng.standard_normal((1, 4, 10))
    w = rng.standard_normal((4, 1, 3))
    full, _ = run_mlrt(make_model("CausalConvWithState", [x, w], n_outputs=2, opset=27), [x, w])
    state = np.zeros((1, 4, 2))
    step = make_model("CausalConvWithState", [x[:, :, :1], w, None, state], n_outputs=2, opset=27)
    outs = []
    for t in range(10):                                    # token by token through the carried state
        y, state = run_mlrt(step, [x[:, :, t:t + 1], w, None, state])
        outs.append(y)
    np.testing.assert_allclose(np.concatenate(outs, axis=2), full, rtol=1e-12)
    check_node("CausalConvWithState", [x.astype(np.float16), w.astype(np.float16)], {}, n_outputs=2, opset=27,
               rtol=1e-3, atol=1e-3)
    with pytest.raises(mlrt.MlrtError):
        run("CausalConvWithState", [x, rng.standard_normal((3, 1, 3))], opset=27)
    with pytest.raises(mlrt.MlrtError):
        run("CausalConvWithState", [x, w], {"activation": "gelu"}, opset=27)


# -- TfIdfVectorizer ----------------------------------------------------------------------------

POOL = dict(ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7])


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("skip", [0, 1, 3])
@pytest.mark.parametrize("grams", [(1, 1), (1, 2), (2, 2)])
def test_tfidf_int(mode, skip, grams):
    x = rng.integers(2, 9, (3, 13)).astype(np.int32)
    attrs = dict(POOL, mode=mode, max_skip_count=skip, min_gram_length=grams[0], max_gram_length=grams[1],
                 weights=[0.5, 1.0, 2.0, 3.0, 0.25, 1.5, 4.0])
    check_node("TfIdfVectorizer", [x], attrs, opset=9)
    check_node("TfIdfVectorizer", [x[0].astype(np.int64)], attrs, opset=9)


def test_tfidf_strings_and_bad():
    x = np.array([["a", "b", "a", "c"], ["b", "c", "d", "a"]], dtype=object)
    attrs = dict(mode="TF", max_skip_count=1, min_gram_length=1, max_gram_length=2, ngram_counts=[0, 2],
                 ngram_indexes=[2, 0, 1, 3], pool_strings=["a", "b", "a", "b", "b", "c"])
    check_node("TfIdfVectorizer", [x], attrs, opset=9)
    got = run("TfIdfVectorizer", [x], dict(attrs, max_skip_count=0), opset=9)
    np.testing.assert_array_equal(got, [[1, 1, 2, 0], [1, 0, 1, 1]])  # b->0, (a b)->1, a->2, (b c)->3
    with pytest.raises(mlrt.MlrtError):
        run("TfIdfVectorizer", [np.ones(3, np.int64)], attrs, opset=9)   # integers against a string pool
    with pytest.raises(mlrt.MlrtError):
        run("TfIdfVectorizer", [np.ones(3, np.int64)], dict(attrs, mode="BM25"), opset=9)


# -- DeformConv (the reference is slow: tiny shapes) -----------------------------------------------

@pytest.mark.parametrize("group,offset_group", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_deform_conv(group, offset_group):
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((4, 4 // group, 2, 3)).astype(np.float32)
    off = (rng.standard_normal((2, offset_group * 6 * 2, 4, 4)) * 1.5).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    mask = rng.uniform(0, 1, (2, offset_group * 6, 4, 4)).astype(np.float32)
    attrs = {"group": group, "offset_group": offset_group}
    check_node("DeformConv", [x, w, off], attrs, opset=22)
    check_node("DeformConv", [x, w, off, b, mask], attrs, opset=22)


def test_deform_conv_geometry_and_zero_offsets():
    x = rng.standard_normal((1, 2, 6, 7))
    w = rng.standard_normal((3, 2, 3, 3))
    attrs = {"pads": [1, 2, 1, 0], "strides": [2, 1], "dilations": [1, 2]}
    off = rng.standard_normal((1, 18, 3, 5))
    # float64, but the reference's GridSample sampling is only good to ~1e-7 (mlrt's matches a direct sum to 1e-15)
    check_node("DeformConv", [x, w, off], attrs, opset=22, rtol=1e-6, atol=1e-6)
    zero = np.zeros((1, 18, 4, 5))
    got = run("DeformConv", [x, w, zero], {}, opset=22)       # no offsets: a plain convolution
    want = np.zeros((1, 3, 4, 5))
    for i in range(4):
        for j in range(5):
            want[0, :, i, j] = np.tensordot(w, x[0, :, i:i + 3, j:j + 3], axes=3)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_deform_conv_bad():
    x, w = np.zeros((1, 2, 5, 5), np.float32), np.zeros((3, 2, 3, 3), np.float32)
    with pytest.raises(mlrt.MlrtError):
        run("DeformConv", [x, w, np.zeros((1, 18, 2, 2), np.float32)], opset=22)   # offset's size is wrong
    with pytest.raises(mlrt.MlrtError):
        run("DeformConv", [x, w, np.zeros((1, 18, 3, 3), np.float32)], {"group": 2}, opset=22)
    with pytest.raises(mlrt.MlrtError):
        run("DeformConv", [np.zeros((1, 2, 5), np.float32), np.zeros((3, 2, 3), np.float32),
                           np.zeros((1, 6, 3), np.float32)], opset=22)
