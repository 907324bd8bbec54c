"""samples/ocr_post.py on made-up maps, rectangles and scores: no model, no pixels.

The detector's regions (rotated, scored over their own pixels, grown back), their
orientation, fragments joined, reading order, the direction decisions, the
recognizer's batches and CTC decoding."""

import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))

from ocr_post import (CLS_HEIGHT, CLS_WIDTH, REC_BATCH, TextBox, boxes_from_map, characters, cls_windows,  # noqa: E402
                      ctc_decode, det_size, lines_from_map, merge_fragments, orient, page_direction, quad_size,
                      reading_order, rec_batches, rectangle, regions_from_map, strip_transform, turn_tall,
                      upside_down)


def line(cx, cy, width, height, degrees=0.0):
    """An oriented quad: a text line centred at (cx, cy) reading at `degrees` (on
    screen, clockwise from level, as image coordinates have y down)."""
    a = np.radians(degrees)
    return rectangle(np.array([cx, cy], np.float32), np.array([np.cos(a), np.sin(a)]), width, height)


def angle_of(quad) -> float:
    d = quad[1] - quad[0]
    return float(np.degrees(np.arctan2(d[1], d[0])))


# -- detection ---------------------------------------------------------------------------------------

def test_det_size_brings_the_short_side_to_736_in_multiples_of_32():
    assert det_size(960, 426) == (1664, 736)
    assert det_size(2010, 1000) == (2016, 992)  # large enough: only rounded
    assert det_size(736, 100) == (5408, 736)


def test_a_rectangle_in_the_map_gives_that_region():
    prob = np.zeros((64, 128), np.float32)
    prob[10:30, 20:100] = 0.9
    (region,) = regions_from_map(prob, 128, 64, unclip_ratio=0, dilate=False)
    assert region.score == pytest.approx(0.9)
    assert np.allclose(region.quad.min(axis=0), (20, 10)) and np.allclose(region.quad.max(axis=0), (100, 30))
    (region,) = regions_from_map(prob, 256, 32, unclip_ratio=0, dilate=False)  # map -> source scale
    assert np.allclose(region.quad.min(axis=0), (40, 5)) and np.allclose(region.quad.max(axis=0), (200, 15))


@pytest.mark.parametrize("degrees", [-30, -12, 4, 25])
def test_a_tilted_line_is_scored_over_its_own_pixels(degrees):
    prob = np.zeros((200, 300), np.float32)
    cv2.fillPoly(prob, [np.round(line(150, 100, 200, 16, degrees)).astype(np.int32)], 0.9)
    (region,) = regions_from_map(prob, 300, 200, unclip_ratio=0, dilate=False)
    assert region.score > 0.85  # its bounding rectangle's mean is far lower: mostly background
    quad = orient(region.quad, np.array([1.0, 0.0]))
    assert angle_of(quad) == pytest.approx(degrees, abs=1.5)
    assert quad_size(quad) == pytest.approx((201, 17), abs=2)


def test_the_region_grows_by_area_times_ratio_over_perimeter():
    prob = np.zeros((100, 200), np.float32)
    prob[40:60, 50:150] = 0.8
    (region,) = regions_from_map(prob, 200, 100)  # dilation: 101 x 21 pixels, then unclip on each side
    d = 101 * 21 * 1.6 / (2 * (101 + 21))
    assert quad_size(orient(region.quad, np.array([1.0, 0.0]))) == pytest.approx((101 + 2 * d, 21 + 2 * d), abs=1e-3)
    assert region.quad.mean(axis=0) == pytest.approx((100.5, 50.5), abs=1e-3)


def test_weak_thin_and_faint_regions_are_dropped():
    prob = np.zeros((100, 200), np.float32)
    prob[10:30, 10:100] = 0.4  # above thresh 0.3, below box_thresh 0.5
    prob[50:52, 10:100] = 0.9  # 2 pixels high (3 with dilation is kept; without it, dropped)
    prob[70:90, 10:100] = 0.2  # below thresh
    assert regions_from_map(prob, 200, 100, dilate=False) == []


def test_boxes_are_the_regions_bounds_inside_the_image_top_to_bottom():
    prob = np.zeros((100, 200), np.float32)
    prob[60:80, 10:100] = 0.9
    prob[2:20, 120:199] = 0.9  # grown past the top and right edges: clipped
    top, bottom = boxes_from_map(prob, 400, 200)  # the map at half the source's scale
    d = 80 * 19 * 1.6 / (2 * (80 + 19))  # 79 x 18 pixels, 80 x 19 dilated
    assert top == (round(2 * (120 - d)), 0, 400 - round(2 * (120 - d)), round(2 * (21 + d)), top.score)
    d = 91 * 21 * 1.6 / (2 * (91 + 21))
    assert bottom[:4] == (0, round(2 * (60 - d)), round(2 * (101 + d)), round(2 * (81 + d)) - round(2 * (60 - d)))
    assert isinstance(top, TextBox) and top.score == pytest.approx(0.9 * 79 * 18 / (80 * 19))  # dilated pixels are 0


def test_lines_from_a_map_of_a_tilted_page_read_along_it():
    prob = np.zeros((300, 400), np.float32)
    for k in range(3):
        cv2.fillPoly(prob, [np.round(line(200, 80 + 60 * k, 260, 14, -20)).astype(np.int32)], 0.9)
    quads = lines_from_map(prob, 800, 600)
    assert len(quads) == 3 and all(angle_of(q) == pytest.approx(-20, abs=1.5) for q in quads)


# -- orientation and lines ---------------------------------------------------------------------------

def test_orient_reads_along_the_side_nearest_the_page_direction():
    box = cv2.boxPoints(((100, 100), (30, 200), 60))  # cv2's own corner order and angle convention
    quad = orient(box, np.array([1.0, 0.0]))
    assert quad_size(quad) == pytest.approx((200, 30), abs=1e-3)
    assert abs(angle_of(quad)) < 90  # left to right, whichever way cv2 listed the corners
    assert angle_of(orient(box, np.array([-1.0, 0.0]))) == pytest.approx(angle_of(quad) + 180, abs=1e-3) or \
        angle_of(orient(box, np.array([-1.0, 0.0]))) == pytest.approx(angle_of(quad) - 180, abs=1e-3)


def test_page_direction_is_the_mean_of_long_sides_up_to_sign():
    assert page_direction([line(0, 0, 300, 30, 10), line(0, 50, 300, 30, 190)]) == pytest.approx(
        [np.cos(np.radians(10)), np.sin(np.radians(10))], abs=1e-6)
    d = page_direction([line(0, 0, 300, 30, 88), line(0, 50, 300, 30, -88)])  # both nearly vertical
    assert abs(d[0]) < 1e-6 and abs(d[1]) == pytest.approx(1)
    assert page_direction([line(0, 0, 30, 30, 40)]) == pytest.approx([1, 0])  # nothing longer than tall


def test_tall_strips_are_turned_and_others_kept():
    tall = line(50, 50, 20, 60)
    turned = turn_tall(tall)
    assert quad_size(turned) == pytest.approx((60, 20), abs=1e-4) and angle_of(turned) == pytest.approx(90)
    wide = line(50, 50, 60, 41)
    assert turn_tall(wide) is wide


def test_strip_transform_maps_the_quad_onto_a_level_strip():
    quad = line(300, 200, 240, 40, 30)
    warp, size = strip_transform(quad)
    assert size == (240, 40)
    assert np.allclose(cv2.perspectiveTransform(quad[None], warp)[0], [[0, 0], [240, 0], [240, 40], [0, 40]],
                       atol=1e-3)


@pytest.mark.parametrize("degrees", [0, 25, 180])
def test_fragments_on_one_baseline_are_joined(degrees):
    a = np.radians(degrees)
    d, n = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    at = lambda u, v, w, h: rectangle(np.array([400, 400]) + u * d + v * n, d, w, h)  # noqa: E731
    quads = [at(0, 0, 200, 40), at(100 + 12 + 60, 2, 120, 36),  # gap 12 < 0.5 x 40: one line
             at(0, 100, 200, 40), at(100 + 90 + 60, 100, 120, 40),  # gap 90: apart
             at(0, 200, 200, 40), at(100 + 10 + 60, 235, 120, 40)]  # a line lower: apart
    merged = merge_fragments(quads, d)
    assert len(merged) == 5
    (joined,) = [q for q in merged if quad_size(q)[0] > 300]
    assert quad_size(joined)[0] == pytest.approx(200 + 12 + 120, abs=1)
    assert angle_of(joined) == pytest.approx(angle_of(quads[0]), abs=1.5)


def test_two_columns_read_one_after_the_other_under_their_title():
    title = line(300, 40, 500, 40)
    left = [line(150, 100 + 45 * k, 240, 34) for k in range(4)]
    right = [line(450, 100 + 45 * k, 240, 34) for k in range(4)]
    quads = [right[2], left[1], title, right[0], left[3], right[1], left[0], right[3], left[2]]
    names = ["R2", "L1", "T", "R0", "L3", "R1", "L0", "R3", "L2"]
    order = [names[i] for i in reading_order(quads)]
    assert order == ["T", "L0", "L1", "L2", "L3", "R0", "R1", "R2", "R3"]


@pytest.mark.parametrize("degrees", [-30, 15, 180, 200])
def test_reading_order_follows_the_page_however_it_is_turned(degrees):
    a = np.radians(degrees)
    d, n = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
    at = lambda u, v, w: rectangle(np.array([500, 500]) + u * d + v * n, d, w, 34)  # noqa: E731
    items = [at(-100, 45 * k, 200 - 20 * k) for k in range(5)]  # a receipt: item, price far right
    prices = [at(220, 45 * k + 2, 60) for k in range(5)]
    quads = prices[::-1] + items[::-1]
    order = reading_order(quads)
    names = [f"P{4 - k}" for k in range(5)] + [f"I{4 - k}" for k in range(5)]
    assert [names[i] for i in order] == [x for k in range(5) for x in (f"I{k}", f"P{k}")]


def test_reading_order_of_nothing():
    assert reading_order([]) == []


# -- direction -------------------------------------------------------------------------------------------

def test_cls_windows_show_a_long_strip_at_true_scale():
    assert cls_windows(300, 96) == [(0, 300)]  # 150 wide at height 48: whole
    wins = cls_windows(1000, 48)  # three windows of 192, first at the start, last at the end
    assert wins == [(0, 192), (404, 192), (808, 192)]
    assert cls_windows(250, 48) == [(0, 192), (58, 192)]
    assert all(w == round(CLS_WIDTH * 96 / CLS_HEIGHT) for _, w in cls_windows(2000, 96))


def test_upside_down_takes_sure_calls_and_lets_the_page_decide_the_rest():
    never = lambda idx: pytest.fail(f"looked again at {list(idx)}")  # noqa: E731
    scores = [[0.02, 0.98], [0.05, 0.95], [0.4, 0.6], [0.55, 0.45]]
    assert upside_down(scores, [10, 10, 1, 1], never).tolist() == [True, True, True, True]
    scores = [[0.98, 0.02], [0.4, 0.6]]
    assert upside_down(scores, [10, 1], never).tolist() == [False, False]


def test_a_call_against_the_page_is_checked_the_other_way_up():
    asked = []

    def turned(idx):
        asked.append(list(idx))
        return [[0.81, 0.19]]  # the classifier says 0 degrees for the strip turned, too

    scores = [[0.03, 0.97], [0.02, 0.98], [0.91, 0.09]]  # the third is "sure" it is upright
    assert upside_down(scores, [10, 10, 3], turned).tolist() == [True, True, True]
    assert asked == [[2]]
    upright = lambda idx: [[0.02, 0.98]]  # noqa: E731  (turned, it reads upside down: it was upright)
    assert upside_down(scores, [10, 10, 3], upright).tolist() == [True, True, False]


# -- recognition -------------------------------------------------------------------------------------

def test_rec_batches_pad_little_and_share_shapes():
    widths = [10, 33, 40, 41, 100, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 1000]
    batches = rec_batches(widths)
    assert sorted(i for batch, _ in batches for i in batch) == list(range(len(widths)))
    for batch, canvas in batches:
        assert all(widths[i] <= canvas <= max(32, 1.25 * widths[i] + 8) for i in batch)
    # canvases: from 32, each x1.25 rounded up to a multiple of 8 (32, 40, 56, 72, 96, 120, 152,
    # 192, 240, 304, 384, ..., 1184), the narrowest that holds the strip
    assert batches == [([0], 32), ([1, 2], 40), ([3], 56), ([4], 120), ([5, 6, 7, 8, 9], 304),
                       ([10, 11, 12, 13, 14], 384), ([15], 1184)]
    # more strips of one canvas than a run takes: split at REC_BATCH
    assert REC_BATCH == 8
    assert rec_batches([300] * 10) == [(list(range(8)), 304), ([8, 9], 304)]


def test_ctc_decode_merges_repeats_and_drops_blanks():
    chars = characters({"character": "a\nb"})
    assert chars == ["<blank>", "a", "b", " "]
    steps = [1, 1, 0, 1, 2, 2, 0, 0, 3, 1]  # a a _ a b b _ _ ' ' a
    scores = np.full((1, len(steps), 4), 0.1, np.float32)
    scores[0, np.arange(len(steps)), steps] = np.linspace(0.5, 0.95, len(steps))
    text, conf = ctc_decode(scores, chars)
    assert text == "aab a"
    assert conf == pytest.approx(np.mean(scores[0, [0, 3, 4, 8, 9]].max(axis=1)))
    assert ctc_decode(np.eye(4, dtype=np.float32)[[0, 0, 0]], chars) == ("", 0.0)
