"""AffineGrid, CenterCropPad, Col2Im, MaxUnpool and RoiAlign against onnx.reference
(and against hand-made expectations where it is wrong or refuses: float64 AffineGrid,
size-1 align_corners grids, opset-10 RoiAlign): every attribute, 1-D to 3-D, several
element types, edge sizes, empty tensors, bad input."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt, run_reference

rng = np.random.default_rng(0)
I64 = np.int64


def rand(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return rng.integers(0, 100, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def run(op, inputs, attrs=None, opset=None):
    return run_mlrt(make_model(op, inputs, attrs, opset=opset), inputs)[0]


# ---- AffineGrid ---------------------------------------------------------------------------------


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [(2, 3, 5, 7), (1, 1, 2, 13), (2, 1, 3, 4, 5), (1, 2, 1, 2, 9)])
def test_affine_grid(size, align):
    nd = len(size) - 2
    theta = rand((size[0], nd, nd + 1)) / 10
    check_node("AffineGrid", [theta, np.array(size, I64)], {"align_corners": align})


def _affine_expected(theta, size, align):
    dims = size[2:]
    axes = []
    for n in dims:
        if align:
            axes.append(np.linspace(-1, 1, n) if n > 1 else np.array([-1.0]))
        else:
            axes.append((np.arange(n) * 2 + 1) / n - 1)
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([*reversed(mesh), np.ones_like(mesh[0])], axis=-1)  # x, y[, z], 1
    return np.einsum("...j,nkj->n...k", base, theta)


def test_affine_grid_float64_and_single_pixel():
    """onnx.reference returns float32 for float64 theta and divides by zero on a
    size-1 align_corners axis (which, as in PyTorch, is -1 there)."""
    for size, align in [((2, 1, 3, 4), 0), ((2, 1, 1, 4), 1), ((1, 1, 1, 1, 3), 1), ((1, 1, 1, 1), 0)]:
        nd = len(size) - 2
        theta = rand((size[0], nd, nd + 1), np.float64)
        got = run("AffineGrid", [theta, np.array(size, I64)], {"align_corners": align})
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, _affine_expected(theta, size, align), rtol=1e-12, atol=1e-12)


def test_affine_grid_empty_and_bad():
    got = run("AffineGrid", [rand((0, 2, 3)), np.array([0, 1, 4, 5], I64)])
    assert got.shape == (0, 4, 5, 2)
    for theta, size in [(rand((1, 2, 3)), [2, 1, 4, 4]), (rand((1, 2, 3)), [1, 1, 4, 4, 4]),
                        (rand((1, 2, 3)), [1, 4, 4]), (rand((1, 3, 3)), [1, 1, 4, 4]),
                        (rand((1, 2, 3)), [1, 1, -4, 4])]:
        with pytest.raises(mlrt.MlrtError):
            run("AffineGrid", [theta, np.array(size, I64)])


# ---- CenterCropPad ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_])
def test_center_crop_pad(dtype):
    x = rand((5, 6, 3), dtype)
    for shape in [(3, 4, 3), (8, 9, 3), (2, 11, 1), (5, 6, 3), (1, 1, 1), (4, 7, 6)]:
        check_node("CenterCropPad", [x, np.array(shape, I64)], opset=18)


def test_center_crop_pad_axes_and_ranks():
    x = rand((4, 7, 3))
    check_node("CenterCropPad", [x, np.array([6, 2], I64)], {"axes": [0, 1]}, opset=18)
    check_node("CenterCropPad", [x, np.array([5, 2], I64)], {"axes": [2, 0]}, opset=18)
    check_node("CenterCropPad", [x, np.array([9], np.int32)], {"axes": [1]}, opset=18)
    check_node("CenterCropPad", [rand((13,)), np.array([4], I64)], opset=18)
    check_node("CenterCropPad", [rand((127,)), np.array([200], I64)], opset=18)
    got = run("CenterCropPad", [x, np.array([5, 2], I64)], {"axes": [-1, -3]}, opset=18)
    np.testing.assert_array_equal(got, run("CenterCropPad", [x, np.array([5, 2], I64)], {"axes": [2, 0]}, opset=18))


def test_center_crop_pad_empty_and_bad():
    assert run("CenterCropPad", [rand((0, 4)), np.array([0, 2], I64)], opset=18).shape == (0, 2)
    assert run("CenterCropPad", [rand((3, 4)), np.array([0, 6], I64)], opset=18).shape == (0, 6)
    for shape, attrs in [([2, 2, 2], {}), ([-1, 2], {}), ([2], {"axes": [0, 0]}), ([2, 2], {"axes": [0, 5]})]:
        with pytest.raises(mlrt.MlrtError):
            run("CenterCropPad", [rand((3, 4)), np.array(shape, I64)], attrs, opset=18)


# ---- Col2Im ---------------------------------------------------------------------------------------


def _col2im_inputs(n, c, image, block, attrs, dtype=np.float32):
    nd = len(image)
    dil, strides = attrs.get("dilations", [1] * nd), attrs.get("strides", [1] * nd)
    pads = attrs.get("pads", [0] * 2 * nd)
    blocks = [(image[d] + pads[d] + pads[nd + d] - dil[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(nd)]
    x = rand((n, c * int(np.prod(block)), int(np.prod(blocks))), dtype)
    return [x, np.array(image, I64), np.array(block, I64)]


@pytest.mark.parametrize("image,block,attrs", [
    ([5, 5], [2, 2], {}),
    ([6, 7], [3, 2], {"strides": [2, 1]}),
    ([5, 5], [3, 3], {"pads": [1, 0, 2, 1]}),
    ([9, 8], [2, 3], {"dilations": [3, 2], "strides": [1, 2], "pads": [0, 1, 1, 0]}),
    ([13], [4], {"strides": [3], "pads": [2, 1]}),
    ([3, 4, 5], [2, 2, 3], {"strides": [1, 2, 1], "dilations": [1, 1, 2]}),
    ([1, 1], [1, 1], {}),
])
def test_col2im(image, block, attrs):
    check_node("Col2Im", _col2im_inputs(2, 3, image, block, attrs), attrs, opset=18)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint8])
def test_col2im_types(dtype):
    attrs = {"strides": [1, 1]}
    check_node("Col2Im", _col2im_inputs(1, 2, [4, 5], [2, 3], attrs, dtype), attrs, opset=18)


def test_col2im_empty_and_bad():
    inputs = _col2im_inputs(0, 2, [4, 4], [2, 2], {})
    assert run("Col2Im", inputs, opset=18).shape == (0, 2, 4, 4)
    good = _col2im_inputs(1, 2, [4, 4], [2, 2], {})
    for inputs, attrs in [([good[0][:, :, :-1], *good[1:]], {}),                        # wrong L
                          ([good[0][:, :-1], *good[1:]], {}),                           # C * K not divisible
                          ([good[0], np.array([4, 4, 4], I64), good[2]], {}),            # rank mismatch
                          (good, {"strides": [0, 1]}),
                          ([good[0], np.array([1, 1], I64), good[2]], {}),               # no block fits
                          (good, {"pads": [1, 1]})]:
        with pytest.raises(mlrt.MlrtError):
            run("Col2Im", inputs, attrs, opset=18)


# ---- MaxUnpool ----------------------------------------------------------------------------------


def _pooled(shape, attrs, dtype=np.float32):
    x = rand(shape, dtype)
    model = make_model("MaxPool", [x], attrs, n_outputs=2, opset=12)
    return run_reference(model, [x])


@pytest.mark.parametrize("shape,attrs", [
    ((1, 1, 4, 4), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((2, 3, 7, 8), {"kernel_shape": [3, 2], "strides": [2, 2]}),
    ((2, 3, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 2, 12), {"kernel_shape": [3], "strides": [3]}),
    ((1, 2, 4, 6, 4), {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
    ((1, 1, 5, 5), {"kernel_shape": [2, 2], "strides": [1, 1]}),
])
@pytest.mark.parametrize("opset", [9, 11, 22])
def test_maxunpool(shape, attrs, opset):
    """Indices are flat positions in the unpooled shape (which these inputs to MaxPool
    have); a larger output_shape is filled from its origin, as onnx.reference and the
    conformance case do (onnxruntime instead reads indices in output_shape's layout)."""
    y, ind = _pooled(shape, attrs)
    check_node("MaxUnpool", [y, ind], attrs, opset=opset)
    out = [*y.shape[:2], *[s + 2 for s in _unpooled(y.shape, attrs)]]
    check_node("MaxUnpool", [y, ind, np.array(out, I64)], attrs, opset=opset)


def _unpooled(shape, attrs):
    k, s = attrs["kernel_shape"], attrs.get("strides", [1] * len(attrs["kernel_shape"]))
    p = attrs.get("pads", [0] * 2 * len(k))
    return [(shape[d + 2] - 1) * s[d] - p[d] - p[len(k) + d] + k[d] for d in range(len(k))]


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.uint8])
def test_maxunpool_types(dtype):
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    y, ind = _pooled((2, 2, 6, 6), attrs, np.float32)
    check_node("MaxUnpool", [y.astype(dtype), ind], attrs, opset=11)


def test_maxunpool_smaller_output_and_bad():
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    y, ind = _pooled((1, 1, 4, 4), attrs)
    got = run("MaxUnpool", [y, ind, np.array([1, 1, 3, 3], I64)], attrs, opset=11)
    full = run("MaxUnpool", [y, ind], attrs, opset=11)
    np.testing.assert_array_equal(got, full[:, :, :3, :3])  # elements outside the output are dropped
    assert run("MaxUnpool", [rand((0, 2, 2, 2)), np.zeros((0, 2, 2, 2), I64)], attrs, opset=11).shape == (0, 2, 4, 4)
    for inputs, a in [([y, ind + 16], attrs),                              # index past the unpooled tensor
                      ([y, ind - 100], attrs),
                      ([y, ind[:, :, :1]], attrs),                          # shape mismatch
                      ([y, ind.astype(np.int32)], attrs),
                      ([y, ind, np.array([1, 2, 4, 4], I64)], attrs),       # output_shape's C differs
                      ([y, ind], {"kernel_shape": [2]})]:
        with pytest.raises(mlrt.MlrtError):
            run("MaxUnpool", inputs, a, opset=11)


# ---- RoiAlign -----------------------------------------------------------------------------------

ROIS = np.array([[0, 0, 4, 4], [1, 2, 5, 3.5], [-2, -1, 3, 9], [6, 6, 7.5, 7], [3, 3, 2, 2.5], [0, 0, 30, 30]],
                np.float32)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("attrs", [{}, {"output_height": 2, "output_width": 3},
                                   {"sampling_ratio": 2, "output_height": 3},
                                   {"spatial_scale": 0.5, "output_width": 4, "output_height": 4},
                                   {"sampling_ratio": 1, "spatial_scale": 2.0, "output_height": 5, "output_width": 2}])
def test_roialign(mode, ctm, attrs):
    x = rand((2, 3, 8, 9))
    bi = np.array([0, 1, 1, 0, 1, 0], I64)
    check_node("RoiAlign", [x, ROIS, bi], {**attrs, "mode": mode, "coordinate_transformation_mode": ctm}, opset=16)


def test_roialign_float64_and_many_channels():
    x = rand((1, 70, 6, 6), np.float64)
    rois = ROIS.astype(np.float64)[:3]
    check_node("RoiAlign", [x, rois, np.zeros(3, I64)], {"output_height": 2, "output_width": 2}, opset=22)


def test_roialign_opset_10_is_output_half_pixel():
    """onnx.reference applies opset 16's default (half_pixel) at opset 10 too."""
    x, bi = rand((2, 3, 8, 9)), np.array([0, 1, 1, 0, 1, 0], I64)
    for mode in ["avg", "max"]:
        attrs = {"output_height": 3, "output_width": 2, "mode": mode}
        got = run("RoiAlign", [x, ROIS, bi], attrs, opset=10)
        want = check_node("RoiAlign", [x, ROIS, bi], {**attrs, "coordinate_transformation_mode": "output_half_pixel"},
                          opset=16)[0]
        np.testing.assert_array_equal(got, want)


def test_roialign_empty_and_bad():
    x = rand((2, 3, 8, 9))
    assert run("RoiAlign", [x, np.zeros((0, 4), np.float32), np.zeros(0, I64)], opset=16).shape == (0, 3, 1, 1)
    for inputs, attrs in [([x, ROIS[:2], np.array([0, 2], I64)], {}),        # batch index out of range
                          ([x, ROIS[:2], np.array([0, -1], I64)], {}),
                          ([x, ROIS[:2, :3], np.array([0, 0], I64)], {}),
                          ([x, ROIS[:2], np.array([0], I64)], {}),
                          ([x, ROIS[:2].astype(np.float64), np.array([0, 0], I64)], {}),
                          ([x, ROIS[:2], np.array([0, 0], I64)], {"mode": "min"}),
                          ([x, ROIS[:2], np.array([0, 0], I64)], {"output_height": 0}),
                          ([x, np.array([[0, 0, 1e30, 1e30]], np.float32), np.array([0], I64)], {})]:
        with pytest.raises(mlrt.MlrtError):
            run("RoiAlign", inputs, attrs, opset=16)
