"""Resize: nearest, n-linear or cubic resampling of any axes (semantics in _resize.py).

Opset 10 takes `scales` only and maps coordinates asymmetrically (nearest rounds down
when an axis grows, up when it shrinks); 11 adds roi/sizes and the coordinate modes;
13 drops tf_half_pixel_for_nn; 18 adds antialias, axes and keep_aspect_ratio_policy;
19 adds half_pixel_symmetric."""

from ._resize import _Resize
from ._shape import normalize_axes

_COORDS_11 = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
              "tf_crop_and_resize")
_COORDS_13 = _COORDS_11[:4] + _COORDS_11[5:]


class Resize_10(_Resize):
    attributes = {"mode": "nearest"}
    value_inputs = (1,)
    mode_names = ("nearest", "linear")

    def coord_mode(self):
        return "asymmetric"

    def nearest_mode(self):
        return "simple"

    def scales_and_sizes(self, inputs, x):
        scales = self.value_of(inputs, 1)
        if scales is None:
            raise self.fail("input 1 (scales) is required")
        return scales, None, None


class Resize_11(_Resize):
    attributes = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "cubic_coeff_a": -0.75,
                  "exclude_outside": 0, "extrapolation_value": 0.0, "nearest_mode": "round_prefer_floor"}
    value_inputs = (1, 2, 3)
    coord_names = _COORDS_11

    def scales_and_sizes(self, inputs, x):
        return self.value_of(inputs, 2), self.value_of(inputs, 3), self.value_of(inputs, 1)


class Resize_13(Resize_11):
    coord_names = _COORDS_13


class Resize_18(Resize_13):
    attributes = {**Resize_11.attributes, "antialias": 0, "axes": None, "keep_aspect_ratio_policy": "stretch"}

    def axes(self, x):
        if self.a.axes is None:
            return list(range(x.rank))
        return normalize_axes(self, self.a.axes, x.rank)

    def policy(self):
        return self.a.keep_aspect_ratio_policy

    def antialias(self):
        return self.a.antialias


class Resize_19(Resize_18):
    coord_names = _COORDS_13 + ("half_pixel_symmetric",)
