"""Resize and Upsample on OpenCL against the C kernel: every mode, coordinate
transformation and nearest rounding, scales and sizes, roi with extrapolation, axes,
keep_aspect_ratio_policy, antialias, exclude_outside, cubic_coeff_a; opsets 10 to 19;
float32 and float16; the 2-D (last two axes) and the n-D kernels; empty tensors."""

import numpy as np
import pytest

from opencl_check import check_opencl

rng = np.random.default_rng(3)
F32, I64 = np.float32, np.int64
COORDS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def img(shape, dtype=F32):
    return (rng.standard_normal(shape) * 10).astype(dtype)


def scales(*s):
    return np.array(s, F32)


def sizes(*s):
    return np.array(s, I64)


def resize(x, scales_=None, sizes_=None, roi=None, opset=19, **attrs):
    if opset < 13:  # roi and scales are not optional yet: empty tensors stand for "not given"
        roi = np.zeros(0, F32) if roi is None else roi
        scales_ = np.zeros(0, F32) if scales_ is None else scales_
    inputs = [x, roi, scales_, sizes_]
    while inputs[-1] is None:
        inputs.pop()
    return check_opencl("Resize", inputs, attrs, opset=opset)[0]


@pytest.mark.parametrize("dtype", [F32, np.float16])
@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_modes_and_coordinates(mode, coord, dtype):
    x = img((2, 3, 7, 9), dtype)
    for s in [(2.0, 3.0), (0.4, 0.6), (1.7, 0.8), (1.0, 2.4)]:
        resize(x, scales(1, 1, *s), mode=mode, coordinate_transformation_mode=coord)  # the 2-D kernel
    resize(x, scales(1, 1.7, 0.6, 1), mode=mode, coordinate_transformation_mode=coord)  # the n-D kernel
    resize(x, sizes_=sizes(3, 2, 13, 5), mode=mode, coordinate_transformation_mode=coord)


@pytest.mark.parametrize("nearest_mode", NEAREST)
@pytest.mark.parametrize("coord", COORDS + ["tf_half_pixel_for_nn"])
def test_nearest_rounding(nearest_mode, coord):
    x = img((1, 2, 5, 6))
    opset = 11 if coord == "tf_half_pixel_for_nn" else 19
    for s_, z in [(None, sizes(1, 2, 11, 4)), (scales(1, 1, 2.5, 0.5), None), (scales(1, 3, 1.5, 1), None)]:
        resize(x, s_, z, opset=opset, mode="nearest", coordinate_transformation_mode=coord, nearest_mode=nearest_mode)


def test_nearest_copies_exactly():
    """Nearest sums nothing: -0.0, inf and NaN come out as they went in."""
    x = np.array([[0.0, -0.0, np.inf], [-np.inf, np.nan, 1e-40]], F32).reshape(1, 1, 2, 3)
    got = resize(x, scales(1, 1, 2, 2), mode="nearest")
    want = x.repeat(2, axis=2).repeat(2, axis=3)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("opset", [10, 11, 13, 18, 19])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_opsets(opset, mode):
    x = img((1, 3, 6, 8))
    if opset == 10:
        check_opencl("Resize", [x, scales(1, 1, 1.5, 0.5)], {"mode": mode}, opset=10)
        check_opencl("Resize", [x, scales(1, 1, 2, 3)], {"mode": mode}, opset=10)
        return
    resize(x, scales(1, 1, 1.5, 0.75), opset=opset, mode=mode)
    resize(x, sizes_=sizes(1, 3, 4, 13), opset=opset, mode=mode, coordinate_transformation_mode="align_corners")
    resize(x, np.zeros(0, F32), sizes(1, 3, 9, 5), np.zeros(0, F32), opset=opset, mode=mode)  # empty optionals


@pytest.mark.parametrize("dtype", [F32, np.float16])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_crop_and_resize(mode, dtype):
    x = img((1, 2, 6, 7), dtype)
    roi = np.array([0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3], F32)
    resize(x, scales(1, 1, 1.5, 1.2), roi=roi, mode=mode, coordinate_transformation_mode="tf_crop_and_resize",
           extrapolation_value=-7.5)
    resize(x, sizes_=sizes(1, 3, 4, 9), roi=roi, mode=mode, coordinate_transformation_mode="tf_crop_and_resize")
    resize(x, sizes_=sizes(3, 1), roi=np.array([0.2, 0.1, 0.9, 0.5], F32), mode=mode, axes=[2, 3],
           coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=2.0)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_sizes_policies_and_axes(policy, mode):
    x = img((2, 3, 8, 10))
    resize(x, sizes_=sizes(2, 3, 5, 17), mode=mode, keep_aspect_ratio_policy=policy)
    resize(x, sizes_=sizes(5, 17), mode=mode, keep_aspect_ratio_policy=policy, axes=[2, 3])
    resize(x, sizes_=sizes(17, 5), mode=mode, keep_aspect_ratio_policy=policy, axes=[-1, 2])
    resize(x, sizes_=sizes(4, 7), mode=mode, keep_aspect_ratio_policy=policy, axes=[1, 3])
    resize(x, scales(0.5, 3.0), mode=mode, axes=[3, -3])


@pytest.mark.parametrize("dtype", [F32, np.float16])
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_exclude_outside_coeff(mode, dtype):
    x = img((1, 2, 17, 23), dtype)
    for s in [(0.3, 0.45), (0.5, 1.6), (2.0, 0.25)]:
        resize(x, scales(1, 1, *s), mode=mode, antialias=1)
        resize(x, scales(1, 1, *s), mode=mode, antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)
    resize(x, scales(1, 0.6, 0.3, 1), mode=mode, antialias=1)  # n-D with wide windows
    if mode == "cubic":
        resize(x, scales(1, 1, 1.3, 2.1), mode=mode, exclude_outside=1)
        resize(x, scales(1, 1, 0.7, 2.1), mode=mode, cubic_coeff_a=-0.5, coordinate_transformation_mode="align_corners")


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("shape,s", [((13,), (2.3,)), ((1, 127), (1, 0.37)), ((3, 5, 4), (1.5, 0.6, 2)),
                                     ((1, 2, 3, 4, 5), (1, 1, 2, 0.5, 1.5)), ((127, 1), (0.5, 13)),
                                     ((2, 3, 4, 5, 2), (1, 2, 0.5, 1.5, 1)), ((3, 4, 5, 6), (1.5, 0.6, 2, 0.7))])
def test_ranks_and_odd_sizes(mode, shape, s):
    resize(img(shape), scales(*s), mode=mode)


def test_empty_and_identity():
    resize(img((0, 3, 4, 5)), scales(1, 1, 2, 2), mode="linear")
    resize(img((2, 3, 4, 5)), scales(1, 1, 0.1, 2), mode="nearest")       # an axis resized to 0
    resize(img((2, 3, 4, 5)), scales(1, 1, 1, 1), mode="cubic")          # every axis unchanged
    resize(img((1, 1, 1, 1)), sizes_=sizes(1, 1, 5, 3), mode="linear")


def test_nan_and_inf_inputs():
    x = img((1, 1, 5, 6))
    x[0, 0, 1, 2], x[0, 0, 3, 4] = np.nan, np.inf
    resize(x, scales(1, 1, 1.5, 1.5), mode="linear")
    resize(x, scales(1, 1, 0.5, 0.5), mode="nearest")


@pytest.mark.parametrize("mode", ["nearest", "linear", "bilinear"])
def test_upsample(mode):
    x = img((1, 2, 4, 5))
    check_opencl("Upsample", [x], {"mode": mode, "scales": [1.0, 1.0, 2.0, 3.0]}, opset=7)
    if mode != "bilinear":
        check_opencl("Upsample", [x.astype(np.float16), scales(1, 1, 1.5, 2.5)], {"mode": mode}, opset=9)
