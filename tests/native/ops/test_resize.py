"""Resize and Upsample against onnx.reference: every mode, coordinate transformation
and nearest rounding, scales and sizes, axes and keep_aspect_ratio_policy,
tf_crop_and_resize with extrapolation, antialias, exclude_outside, cubic_coeff_a;
float32/float64/float16, uint8/int8 and other integer types; edge sizes, empty
tensors, NaN; the static-plan path; bad input.  Opset 10 Resize and Upsample
(which onnx.reference does not run) are checked against onnxruntime."""

import numpy as np
import pytest
from onnx import helper, numpy_helper

import mlrt
from oracle import assert_same, check_node, make_model, run_mlrt, run_reference, tolerance

rng = np.random.default_rng(0)
F32, I64 = np.float32, np.int64
COORDS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def img(shape, dtype=F32):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def scales(*s):
    return np.array(s, F32)


def sizes(*s):
    return np.array(s, I64)


def resize(x, scales_=None, sizes_=None, roi=None, opset=19, **attrs):
    return check_node("Resize", [x, roi, scales_, sizes_], attrs, opset=opset)[0]


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("s", [(2.0, 3.0), (0.4, 0.6), (1.7, 0.8), (1.0, 2.4)])
def test_modes_and_coordinates(mode, coord, s):
    resize(img((2, 3, 7, 9)), scales(1, 1, *s), mode=mode, coordinate_transformation_mode=coord)


@pytest.mark.parametrize("nearest_mode", NEAREST)
@pytest.mark.parametrize("coord", COORDS)
def test_nearest_rounding(nearest_mode, coord):
    x = img((1, 2, 5, 6))
    resize(x, sizes_=sizes(1, 2, 11, 4), mode="nearest", coordinate_transformation_mode=coord,
           nearest_mode=nearest_mode)
    resize(x, scales(1, 1, 2.5, 0.5), mode="nearest", coordinate_transformation_mode=coord, nearest_mode=nearest_mode)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_sizes_policies_and_axes(policy, mode):
    x = img((2, 3, 8, 10))
    resize(x, sizes_=sizes(2, 3, 5, 17), mode=mode, keep_aspect_ratio_policy=policy)
    resize(x, sizes_=sizes(5, 17), mode=mode, keep_aspect_ratio_policy=policy, axes=[2, 3])
    resize(x, sizes_=sizes(17, 5), mode=mode, keep_aspect_ratio_policy=policy, axes=[3, 2])
    resize(x, sizes_=sizes(4, 7), mode=mode, keep_aspect_ratio_policy=policy, axes=[1, 3])
    resize(x, scales(0.5, 3.0), mode=mode, axes=[3, 1])


def test_negative_axes():
    """onnx.reference cannot take negative axes: they must act as their positive twins."""
    x = img((2, 3, 8, 10))
    for inputs, axes in [([x, None, None, sizes(17, 5)], [-1, 2]), ([x, None, scales(0.5, 3.0)], [3, -3])]:
        got = run_mlrt(make_model("Resize", inputs, {"mode": "linear", "axes": axes}), inputs)[0]
        twin = run_mlrt(make_model("Resize", inputs, {"mode": "linear", "axes": [a % 4 for a in axes]}), inputs)[0]
        np.testing.assert_array_equal(got, twin)


def test_near_integer_coordinates():
    """half_pixel_symmetric, 7 -> 3 rows: row 0 maps to 1.0000000000000002, which is row 1.
    (onnx.reference picks row 0 there: it rounds x + 1 to 2.0 when choosing its window.)"""
    x = np.arange(63, dtype=F32).reshape(1, 1, 7, 9)
    inputs = [x, None, scales(1, 1, 0.5, 1)]
    got = run_mlrt(make_model("Resize", inputs, {"coordinate_transformation_mode": "half_pixel_symmetric"}), inputs)[0]
    np.testing.assert_array_equal(got[0, 0, :, 0], [9, 27, 45])


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_tf_crop_and_resize(mode):
    x = img((1, 2, 9, 8))
    roi = np.array([0, 0, 0.2, -0.3, 1, 1, 0.9, 1.4], F32)
    resize(x, sizes_=sizes(1, 2, 6, 11), roi=roi, mode=mode, coordinate_transformation_mode="tf_crop_and_resize")
    resize(x, sizes_=sizes(1, 2, 6, 11), roi=roi, mode=mode, coordinate_transformation_mode="tf_crop_and_resize",
           extrapolation_value=-7.5)
    resize(x, sizes_=sizes(4, 1), roi=np.array([0.1, 0.2, 0.8, 0.6], F32), mode=mode, axes=[3, 2],
           coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=2.0)
    resize(x, sizes_=sizes(1, 2, 3, 5), roi=roi.astype(np.float64), mode=mode,
           coordinate_transformation_mode="tf_crop_and_resize")


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("s", [0.3, 0.5, 0.77, 1.6])
def test_antialias(mode, s):
    x = img((1, 2, 16, 13))
    resize(x, scales(1, 1, s, 0.45), mode=mode, antialias=1)
    resize(x, scales(1, 1, s, 0.45), mode=mode, antialias=1, exclude_outside=1,
           coordinate_transformation_mode="align_corners")


@pytest.mark.parametrize("a", [-0.75, -0.5, -0.3])
@pytest.mark.parametrize("exclude", [0, 1])
def test_cubic_options(a, exclude):
    resize(img((1, 1, 6, 7)), scales(1, 1, 2.3, 0.7), mode="cubic", cubic_coeff_a=a, exclude_outside=exclude)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("dtype", [np.float64, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64, np.uint32])
def test_dtypes(mode, dtype):
    """Integers round half to even and saturate; onnx.reference's cubic weights are
    float32-precise, so cubic integer results may differ from it by one."""
    x = img((1, 3, 6, 5), dtype)
    if np.dtype(dtype).kind == "u":
        x[0, 0, 0, :] = min(np.iinfo(dtype).max, 65535)  # cubic overshoot saturates
    for inputs, attrs in [([x, None, scales(1, 1, 1.5, 2.2)], {"mode": mode}),
                          ([x, None, None, sizes(1, 3, 4, 3)],
                           {"mode": mode, "coordinate_transformation_mode": "align_corners"})]:
        if mode != "cubic" or np.dtype(dtype).kind == "f":
            check_node("Resize", inputs, attrs)
            continue
        model = make_model("Resize", inputs, attrs)
        got, expected = run_mlrt(model, inputs)[0], run_reference(model, inputs)[0]
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert np.abs(got.astype(np.int64) - expected.astype(np.int64)).max() <= 1


def test_uint8_linear_rounds_half_to_even():
    x = np.array([[0, 1, 2, 3, 250, 255]], np.uint8)
    got = resize(x, scales(1, 2.0), mode="linear", coordinate_transformation_mode="asymmetric")
    assert got[0].tolist() == [0, 0, 1, 2, 2, 2, 3, 126, 250, 252, 255, 255]


def test_nearest_any_type_and_tf_crop_extrapolation():
    for dtype in [np.float16, np.uint64, np.int64]:
        x = np.abs(img((2, 3, 4), np.int32)).astype(dtype)
        resize(x, scales(1, 2.0, 0.5), mode="nearest")
        resize(x, sizes_=sizes(3, 7), roi=np.array([-0.5, 0, 1.2, 1], F32), axes=[1, 2], mode="nearest",
               coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=1.0)
    resize(img((1, 5), np.uint8), sizes_=sizes(1, 8), roi=np.array([0, -1, 1, 2], F32), mode="linear",
           coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=300.0)
    b = img((2, 3, 4), np.int32) > 0  # (onnx.reference cannot resize bool)
    got = run_mlrt(make_model("Resize", [b, None, scales(1, 2.0, 0.5)]), [b, None, scales(1, 2.0, 0.5)])[0]
    np.testing.assert_array_equal(got, b.repeat(2, axis=1)[:, :, 0::2])


def test_float16():
    x = img((1, 2, 5, 6), np.float16)
    for mode in ["linear", "cubic"]:
        check_node("Resize", [x, None, scales(1, 1, 1.6, 0.7)], {"mode": mode}, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("shape,target", [((5,), (11,)), ((13,), (4,)), ((3, 127), (2, 300)), ((1, 1), (5, 3)),
                                          ((2, 1, 4), (3, 2, 9)), ((1, 1, 3, 4, 5), (1, 1, 6, 3, 8)),
                                          ((2, 2, 3, 4), (2, 2, 1, 1)), ((1, 2, 9, 9), (1, 2, 9, 9))])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_edge_sizes_and_ranks(shape, target, mode):
    x = img(shape)
    resize(x, sizes_=np.array(target, I64), mode=mode)
    resize(x, sizes_=np.array(target, I64), mode=mode, coordinate_transformation_mode="pytorch_half_pixel")
    resize(x, sizes_=np.array(target, I64), mode=mode, coordinate_transformation_mode="align_corners")


def test_empty():
    resize(img((0, 3, 4, 4)), scales(1, 1, 2, 2), mode="linear")
    resize(img((1, 3, 4, 4)), sizes_=sizes(1, 3, 0, 8), mode="nearest")
    resize(img((2, 3)), scales(0.3, 1.0), mode="cubic")


def test_nan_and_inf():
    x = img((1, 1, 6, 6))
    x[0, 0, 2, 3] = np.nan
    x[0, 0, 4, 1] = 1e-40
    resize(x, scales(1, 1, 1.5, 2.5), mode="linear")
    resize(x, scales(1, 1, 0.5, 0.5), mode="cubic", antialias=1)
    x[0, 0, 1, 1] = np.inf  # nearest passes specials through untouched
    inputs = [x, None, scales(1, 1, 2, 2)]
    got = run_mlrt(make_model("Resize", inputs, {"mode": "nearest"}), inputs)[0]
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(2, axis=3))


def test_static_plan_matches_eager():
    """scales/sizes as initializers: resolved once, the whole graph in one native plan."""
    x = img((2, 3, 10, 12))
    for mode, init in [("nearest", numpy_helper.from_array(sizes(2, 3, 21, 7), "sz")),
                       ("linear", numpy_helper.from_array(sizes(2, 3, 21, 7), "sz")),
                       ("cubic", numpy_helper.from_array(sizes(2, 3, 5, 30), "sz"))]:
        node = helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode=mode)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, x.shape)],
                                  [helper.make_tensor_value_info("y", 1, None)], [init])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        got = run_mlrt(model, [x])[0]
        expected = resize(x, sizes_=numpy_helper.to_array(init), mode=mode)
        assert_same(got, expected, *tolerance("Resize", 19), where=mode)


def test_opset_11_and_13():
    x = img((1, 2, 5, 7))
    resize(x, scales(1, 1, 1.5, 0.6), roi=np.array([], F32), opset=11, mode="linear")
    resize(x, np.array([], F32), sizes(1, 2, 9, 3), roi=np.array([], F32), opset=11, mode="cubic",
           coordinate_transformation_mode="align_corners")
    resize(x, sizes_=sizes(1, 2, 3, 11), opset=13, mode="nearest", nearest_mode="ceil")


def check_with_ort(op, inputs, attrs, opset):
    """Opset-10 Resize, Upsample and tf_half_pixel_for_nn: onnx.reference does not run them."""
    ort = pytest.importorskip("onnxruntime")
    model = make_model(op, inputs, attrs, opset=opset)
    model.ir_version = 8
    model.graph.output[0].type.tensor_type.elem_type = helper.np_dtype_to_tensor_dtype(inputs[0].dtype)
    got = run_mlrt(model, inputs)[0]
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    expected = sess.run(None, dict(zip(names, [i for i in inputs if i is not None])))[0]
    assert_same(got, expected, *tolerance(op, opset), where=f"{op}-{opset}")


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("s", [(2.0, 3.0), (0.625, 1.5), (1.0, 0.5), (2.5, 1.25)])
def test_resize_10_and_upsample(mode, s):
    x = img((1, 2, 6, 7))
    check_with_ort("Resize", [x, scales(1, 1, *s)], {"mode": mode}, 10)
    if min(s) >= 1:
        check_with_ort("Upsample", [x, scales(1, 1, *s)], {"mode": mode}, 9)
        check_with_ort("Upsample", [x], {"mode": mode, "scales": [1.0, 1.0, *s]}, 7)


def test_tf_half_pixel_for_nn():
    check_with_ort("Resize", [img((1, 2, 5, 6)), np.array([], F32), scales(1, 1, 1.7, 0.6)],
                   {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn"}, 11)


def test_upsample_nearest_against_reference():
    x = img((2, 3, 4, 5), np.int32)
    check_node("Upsample", [x, scales(1, 1, 2, 3)], {"mode": "nearest"}, opset=9)
    check_node("Upsample", [img((3, 4)), scales(3, 1)], {"mode": "nearest"}, opset=9)


@pytest.mark.parametrize("inputs,attrs,opset", [
    ([img((1, 1, 4, 4)), None, scales(1, 1, 2, 2), sizes(1, 1, 8, 8)], {}, 19),          # both scales and sizes
    ([img((1, 1, 4, 4)), None, scales(1, 2, 2)], {}, 19),                                # wrong count
    ([img((1, 1, 4, 4)), None, scales(1, 1, -2, 2)], {}, 19),                            # negative scale
    ([img((1, 1, 4, 4)), None, scales(1, 1, 2, 2)], {"mode": "nearest", "antialias": 1}, 19),
    ([img((1, 1, 4, 4)), None, scales(1, 1, 2, 2)], {"mode": "bicubic"}, 19),
    ([img((1, 1, 4, 4)), None, scales(1, 1, 2, 2)], {"coordinate_transformation_mode": "tf_half_pixel_for_nn"}, 19),
    ([img((1, 1, 4, 4)), None, scales(1, 1, 2, 2)], {"coordinate_transformation_mode": "half_pixel_symmetric"}, 18),
    ([img((1, 1, 4, 4)), None, None, sizes(1, 1, 8, 8)], {"coordinate_transformation_mode": "tf_crop_and_resize"}, 19),
    ([img((1, 1, 4, 4)), None, scales(2, 2)], {"axes": [1, 1]}, 19),
    ([img((1, 1, 4, 4)), None, scales(1, 1, 2, 2)], {"keep_aspect_ratio_policy": "fit"}, 19),
    ([img((1, 1, 4, 4)), None, None], {}, 19),                                           # neither
    ([img((1, 0, 4)), None, None, sizes(1, 2, 4)], {}, 19),                              # empty axis grown
    ([img((1, 1, 4, 4)) > 0, None, scales(1, 1, 2, 2)], {"mode": "linear"}, 19),        # linear on bool
])
def test_bad(inputs, attrs, opset):
    with pytest.raises(mlrt.MlrtError):
        run_mlrt(make_model("Resize", inputs, attrs, opset=opset), inputs)


def test_large_and_many_taps():
    """Rows split over threads (and nearest's repeated-row copy across chunk edges);
    antialias footprints whose products overflow the kernel's stack buffer."""
    x = img((2, 8, 60, 80))
    resize(x, scales(1, 1, 2, 2), mode="nearest")
    resize(x, sizes_=sizes(2, 8, 37, 123), mode="linear")
    resize(img((1, 30, 40, 50)), scales(1, 0.1, 0.1, 0.3), mode="linear", antialias=1)
    resize(img((1, 1, 3, 41, 53)), scales(1, 1, 1, 0.15, 0.2), mode="cubic", antialias=1)


def test_exported_tap_table_checks_what_it_is_given():
    """mlrt_resize_taps (the table the OpenCL kernels read) sizes its table first and
    refuses an axis out of range, a bad mode, an empty input axis or too little room."""
    from mlrt.native import _lib
    ffi, lib = _lib.ffi(), _lib.lib()
    fields = {"mode": _lib.enum_value("MLRT_RESIZE_LINEAR"), "coord_mode": _lib.enum_value("MLRT_RESIZE_HALF_PIXEL"),
              "scales": [2.0] * 8}
    _, params, _ = _lib.pack_params("mlrt_resize_params", fields)
    taps = ffi.new("int64_t *")
    assert lib.mlrt_resize_taps(params, 0, 3, 6, 0, taps, ffi.NULL, ffi.NULL) == lib.MLRT_OK and taps[0] == 2
    idx, w = np.empty(12, np.int32), np.empty(12, np.float32)
    ip, wp = ffi.cast("int32_t *", idx.ctypes.data), ffi.cast("float *", w.ctypes.data)
    assert lib.mlrt_resize_taps(params, 0, 3, 6, 12, taps, ip, wp) == lib.MLRT_OK
    np.testing.assert_array_equal(idx.reshape(6, 2)[:, 0], [0, 0, 0, 1, 1, 2])  # half-pixel, clamped at the edges
    np.testing.assert_allclose(w.reshape(6, 2).sum(axis=1), 1)
    assert lib.mlrt_resize_taps(params, 0, 3, 6, 11, taps, ip, wp) != lib.MLRT_OK  # no room
    assert lib.mlrt_resize_taps(params, 8, 3, 6, 12, taps, ip, wp) != lib.MLRT_OK  # no such axis
    assert lib.mlrt_resize_taps(params, 0, 0, 6, 12, taps, ip, wp) != lib.MLRT_OK  # nothing to read
    _, bad, _ = _lib.pack_params("mlrt_resize_params", {**fields, "mode": 7})
    assert lib.mlrt_resize_taps(bad, 0, 3, 6, 12, taps, ip, wp) != lib.MLRT_OK
