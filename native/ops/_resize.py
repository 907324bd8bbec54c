"""Shared semantics of Resize and Upsample: output sizes from scales or sizes (with
`axes` and `keep_aspect_ratio_policy`), per-axis scales and roi, and the interpolation
and coordinate modes handed to the C kernel (resize.c, as the constants of
kernels/resize.h), which builds the per-axis source indices and weights itself.

Numbers follow onnx.reference: sizes from scales are floor(scale * length); with
sizes the scale is size / length (with a policy, one scale for all resized axes and
sizes rounded half up); an axis whose scale is ~1 and whose length and roi do not
change is copied as is."""

from __future__ import annotations

import math

import numpy as np

from .._lib import MAX_RANK, enum_value
from ._base import Info, Op
from ._shape import bits_of, ints

# ONNX attribute strings -> the constants of kernels/resize.h (the numbers live there)
MODES = {"nearest": "MLRT_RESIZE_NEAREST", "linear": "MLRT_RESIZE_LINEAR", "cubic": "MLRT_RESIZE_CUBIC"}
COORD_MODES = {"half_pixel": "MLRT_RESIZE_HALF_PIXEL", "half_pixel_symmetric": "MLRT_RESIZE_HALF_PIXEL_SYMMETRIC",
               "pytorch_half_pixel": "MLRT_RESIZE_PYTORCH_HALF_PIXEL", "align_corners": "MLRT_RESIZE_ALIGN_CORNERS",
               "asymmetric": "MLRT_RESIZE_ASYMMETRIC", "tf_crop_and_resize": "MLRT_RESIZE_TF_CROP_AND_RESIZE",
               "tf_half_pixel_for_nn": "MLRT_RESIZE_TF_HALF_PIXEL_FOR_NN"}
NEAREST_MODES = {"round_prefer_floor": "MLRT_RESIZE_ROUND_PREFER_FLOOR",
                 "round_prefer_ceil": "MLRT_RESIZE_ROUND_PREFER_CEIL", "floor": "MLRT_RESIZE_FLOOR",
                 "ceil": "MLRT_RESIZE_CEIL", "simple": "MLRT_RESIZE_SIMPLE"}
POLICIES = ("stretch", "not_larger", "not_smaller")


def _given(value) -> bool:
    return value is not None and np.asarray(value).size > 0


class _Resize(Op):
    """Subclasses say where scales/sizes/roi come from and which modes they allow."""

    params = "mlrt_resize_params"
    tolerance = (1e-4, 1e-4)  # onnx.reference's cubic weights are float32-precise (its A is a float32)
    mode_names = ("nearest", "linear", "cubic")
    coord_names = tuple(COORD_MODES)[:6]

    # -- what the versions differ in --------------------------------------------------------
    def mode(self) -> str:
        return self.a.mode

    def coord_mode(self) -> str:
        return self.a.coordinate_transformation_mode

    def nearest_mode(self) -> str:
        return self.a.nearest_mode

    def scales_and_sizes(self, inputs, x: Info):
        """(scales or None, sizes or None, roi or None) as given by the model."""
        raise NotImplementedError

    def axes(self, x: Info) -> list[int]:
        return list(range(x.rank))

    def policy(self) -> str:
        return "stretch"

    def antialias(self) -> int:
        return 0

    # -- semantics ---------------------------------------------------------------------------
    def resolve(self, inputs):
        x = self.need(inputs, 0)
        mode, coord, nearest = self.mode(), self.coord_mode(), self.nearest_mode()
        if mode not in self.mode_names:
            raise self.fail(f"mode '{mode}' is not one of {', '.join(self.mode_names)}")
        if coord not in self.coord_names:
            raise self.fail(f"coordinate_transformation_mode '{coord}' is not one of {', '.join(self.coord_names)}")
        if nearest not in NEAREST_MODES:
            raise self.fail(f"nearest_mode '{nearest}' is not one of {', '.join(list(NEAREST_MODES)[:4])}")
        policy = self.policy()
        if policy not in POLICIES:
            raise self.fail(f"keep_aspect_ratio_policy '{policy}' is not one of {', '.join(POLICIES)}")
        antialias = int(self.antialias())
        if antialias and mode == "nearest":
            raise self.fail("antialias applies to linear and cubic modes only")
        axes = self.axes(x)
        scales_in, sizes_in, roi_in = self.scales_and_sizes(inputs, x)
        rank = x.rank
        if _given(scales_in) and _given(sizes_in):
            raise self.fail("only one of 'scales' and 'sizes' may be given")
        scales = [1.0] * rank
        out = list(x.shape)
        if _given(sizes_in):
            sizes = ints(sizes_in)
            if len(sizes) != len(axes):
                raise self.fail(f"sizes has {len(sizes)} values for {len(axes)} axes of input shape {x.shape}")
            if any(s < 0 for s in sizes):
                raise self.fail(f"sizes {sizes} must not be negative")
            for a, s in zip(axes, sizes):
                if x.shape[a] == 0 and s != 0:
                    raise self.fail(f"cannot resize the empty axis {a} to {s}")
                scales[a] = s / x.shape[a] if x.shape[a] else 1.0
                out[a] = s
            if policy != "stretch":
                pick = min if policy == "not_larger" else max
                scale = pick(scales[a] for a in axes)
                for a in axes:
                    scales[a] = scale
                    out[a] = int(scale * x.shape[a] + 0.5)
        elif _given(scales_in):
            if np.asarray(scales_in).dtype.kind not in "fiu":
                raise self.fail(f"scales must be float values, got {np.asarray(scales_in).dtype.name}")
            given = [float(s) for s in np.asarray(scales_in, np.float32).reshape(-1)]
            if len(given) != len(axes):
                raise self.fail(f"scales has {len(given)} values for {len(axes)} axes of input shape {x.shape}")
            for a, s in zip(axes, given):
                if not (s > 0 and math.isfinite(s)):
                    raise self.fail(f"scales {given} must be positive")
                scales[a] = s
                out[a] = int(math.floor(s * x.shape[a]))
        else:
            raise self.fail("needs 'scales' or 'sizes'")
        roi_start, roi_end = [0.0] * rank, [1.0] * rank
        if coord == "tf_crop_and_resize":
            if not _given(roi_in):
                raise self.fail("coordinate_transformation_mode 'tf_crop_and_resize' needs the 'roi' input")
            roi = [float(v) for v in np.asarray(roi_in, np.float64).reshape(-1)]
            if len(roi) != 2 * len(axes):
                raise self.fail(f"roi has {len(roi)} values, expected {2 * len(axes)} (starts, then ends)")
            for i, a in enumerate(axes):
                roi_start[a], roi_end[a] = roi[i], roi[len(axes) + i]
        identity = [int(math.isclose(scales[d], 1.0) and out[d] == x.shape[d]
                        and math.isclose(roi_start[d], 0.0, abs_tol=1e-9) and math.isclose(roi_end[d], 1.0))
                    for d in range(rank)]
        for d in range(rank):
            if x.shape[d] == 0 and out[d] != 0:
                raise self.fail(f"cannot resize the empty axis {d} to {out[d]}")
        ext = float(self.a.extrapolation_value) if hasattr(self.a, "extrapolation_value") else 0.0
        params = {"mode": mode, "coord_mode": coord, "nearest_mode": nearest,
                  "exclude_outside": int(getattr(self.a, "exclude_outside", 0)), "antialias": antialias,
                  "identity": identity, "extrapolation_bits": _saturated_bits(ext, x.dtype),
                  "cubic_coeff_a": float(getattr(self.a, "cubic_coeff_a", -0.75)), "extrapolation_value": ext,
                  "scales": scales, "roi_start": roi_start, "roi_end": roi_end}
        return x, tuple(out), params

    def infer(self, inputs):
        x, out, _ = self.resolve(inputs)
        if x.rank > MAX_RANK:
            raise self.fail(f"rank {x.rank} is over the supported {MAX_RANK}")
        return [Info(x.dtype, out)]

    def pack(self, inputs, outputs):
        p = self.resolve(inputs)[2]
        return {**p, "mode": enum_value(MODES[p["mode"]]), "coord_mode": enum_value(COORD_MODES[p["coord_mode"]]),
                "nearest_mode": enum_value(NEAREST_MODES[p["nearest_mode"]])}


def _saturated_bits(value: float, dtype) -> int:
    """The bits of `value` as one element of dtype, rounded and clipped for integers."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        value = 0.0 if math.isnan(value) else min(max(float(np.round(value)), float(info.min)), float(info.max))
        return bits_of(int(value) if abs(value) < 2**63 else (info.max if value > 0 else info.min), dtype)
    if dtype.kind == "b":
        return bits_of(bool(value), dtype)
    if dtype.kind == "f":
        return bits_of(value, dtype)
    return 0
