"""NonMaxSuppression against onnx.reference: both box formats, thresholds, limits,
ties, degenerate boxes, many boxes, bad inputs."""

import numpy as np
import pytest

import mlrt
from oracle import check_node, make_model, run_mlrt

rng = np.random.default_rng(0)


def random_boxes(batches, n, center=False):
    xy = rng.uniform(0, 100, (batches, n, 2)).astype(np.float32)
    wh = rng.uniform(1, 30, (batches, n, 2)).astype(np.float32)
    if center:
        return np.concatenate([xy, wh], axis=2)
    return np.concatenate([xy, xy + wh], axis=2)[..., [1, 0, 3, 2]]  # [y1, x1, y2, x2]


def nms(boxes, scores, limit=None, iou=None, score=None, **attrs):
    ins = [boxes, scores,
           None if limit is None else np.array([limit], np.int64),
           None if iou is None else np.array([iou], np.float32),
           None if score is None else np.array([score], np.float32)]
    while ins[-1] is None:
        ins.pop()
    return check_node("NonMaxSuppression", ins, attrs, opset=11)[0]


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("n", [1, 2, 13, 127])
def test_nms_random(center, n):
    boxes = random_boxes(2, n, center)
    scores = rng.uniform(0, 1, (2, 3, n)).astype(np.float32)
    nms(boxes, scores, 10, 0.3, 0.2, center_point_box=center)
    nms(boxes, scores, n, 0.5, center_point_box=center)
    nms(boxes, scores, 3, 0.0, 0.9, center_point_box=center)


def test_nms_many_boxes_fast():
    boxes = random_boxes(1, 600)
    scores = rng.uniform(0, 1, (1, 4, 600)).astype(np.float32)
    out = nms(boxes, scores, 200, 0.5, 0.05)
    assert out.shape[1] == 3 and out.dtype == np.int64


def test_nms_ties_flipped_and_degenerate():
    boxes = np.array([[[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0], [5, 5, 5, 9]]], np.float32)
    scores = np.array([[[0.5, 0.5, 0.9, 0.5, 0.7]]], np.float32)
    out = nms(boxes, scores, 10, 0.5)
    np.testing.assert_array_equal(out[:, 2], [2, 4, 3])  # equal scores: lower index first; empty boxes survive
    nms(boxes, scores, 10, 1.0)                            # nothing overlaps more than 1
    nms(np.zeros((1, 3, 4), np.float32), np.ones((1, 1, 3), np.float32), 5, 0.0)


def test_nms_limits_and_optional_inputs():
    boxes, scores = random_boxes(1, 20), rng.uniform(0, 1, (1, 2, 20)).astype(np.float32)
    assert nms(boxes, scores, 0, 0.5).shape == (0, 3)
    neg = [boxes, scores, np.array([-3], np.int64)]          # the reference trips over a negative limit
    assert run_mlrt(make_model("NonMaxSuppression", neg, opset=11), neg)[0].shape == (0, 3)
    m = make_model("NonMaxSuppression", [boxes, scores], opset=11)
    assert run_mlrt(m, [boxes, scores])[0].shape == (0, 3)  # no max_output_boxes_per_class: no output
    nms(boxes, scores, 1, 0.5)
    assert nms(boxes, np.zeros((1, 2, 20), np.float32), 5, 0.5, 0.0).shape == (0, 3)  # score must exceed the threshold


def test_nms_empty_and_bad():
    assert nms(np.zeros((1, 0, 4), np.float32), np.zeros((1, 3, 0), np.float32), 5, 0.5).shape == (0, 3)
    with pytest.raises(mlrt.MlrtError):
        nms(np.zeros((1, 4, 3), np.float32), np.zeros((1, 1, 4), np.float32), 5, 0.5)
    with pytest.raises(mlrt.MlrtError):
        nms(np.zeros((1, 4, 4), np.float32), np.zeros((1, 1, 5), np.float32), 5, 0.5)
