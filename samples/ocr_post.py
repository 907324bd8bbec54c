"""OCR geometry and post-processing shared by samples/ocr.py and benchmarks/ocr.py.

Nothing here touches pixels or an inference engine.  It sizes the detector's input,
turns the detector's probability map into text regions in source-image pixels (DB
post-processing with PP-OCRv4's settings as RapidOCR ships them: each region a
rotated rectangle, scored over its own pixels and grown back by the margin DB
shrinks text by), orients them (which side reads left to right, tall strips turned),
joins fragments of one line, decides 0 or 180 degrees from the direction
classifier's scores, puts lines in reading order with columns kept apart, and turns
the recognizer's per-step class scores into text (CTC greedy decoding).

A quadrilateral here is a float32 [4, 2] array of (x, y) corners: the text's top-left,
top-right, bottom-right and bottom-left, so quad[1] - quad[0] points along the text.
"""

from __future__ import annotations

import functools
from typing import Mapping, NamedTuple

import cv2
import numpy as np

# RapidOCR 1.4.4 config.yaml, Det section
LIMIT_SIDE_LEN = 736  # limit_type "min": the short side is brought up to this
THRESH = 0.3  # a map pixel above this is text
BOX_THRESH = 0.5  # a region whose mean probability is below this is dropped
UNCLIP_RATIO = 1.6  # the region grows by area * ratio / perimeter on each side
MIN_SIZE = 3  # regions thinner than this (map pixels) are dropped
MAX_CANDIDATES = 1000
# Cls section: the classifier takes 48 x 192 strips and calls a line upside down above 0.9
CLS_HEIGHT, CLS_WIDTH, CLS_THRESH = 48, 192, 0.9
CLS_WINDOWS = 3  # windows of a long line shown to the classifier (see cls_windows)
REC_HEIGHT = 48  # the recognizer's input height
REC_BATCH = 8  # strips per recognizer run at most
TEXT_SCORE = 0.5  # lines read with a lower mean character score are dropped (RapidOCR's Global.text_score)
TALL = 1.5  # a strip this many times taller than wide holds vertical text: turned 90 degrees
# Two pieces share a baseline when their centres lie less than SAME_ROW of the smaller
# height apart across the text; they are one line when the gap between them is at most
# MERGE_GAP line heights.  On samples/data/ocr_testset.py the detector splits a line
# at a double space with a gap of 0.33 line heights (or into overlapping pieces); the
# narrowest column gutter is 1.7 line heights, a receipt's gap to its price 2.5 or more.
SAME_ROW, MERGE_GAP = 0.5, 0.5


class Region(NamedTuple):
    """A detected text region: its rotated rectangle's corners in source pixels (in
    cv2.boxPoints order, not yet oriented) and its mean text probability."""

    quad: np.ndarray
    score: float


class TextBox(NamedTuple):
    """An axis-aligned text box in source-image pixels and its detection score."""

    x: int
    y: int
    width: int
    height: int
    score: float


class TextLine(NamedTuple):
    """One recognized line: its text, the mean score of its characters, and its
    quadrilateral in source-image pixels (top-left of the text first)."""

    text: str
    confidence: float
    quad: np.ndarray

    @property
    def box(self) -> TextBox:
        x, y, w, h = cv2.boundingRect(np.round(self.quad).astype(np.int32))
        return TextBox(x, y, w, h, self.confidence)


def det_size(width: int, height: int, limit_side_len: int = LIMIT_SIDE_LEN) -> tuple[int, int]:
    """The detector's input size (width, height) for a source image: short side up to
    limit_side_len (never down), then each side rounded to a multiple of 32."""
    ratio = limit_side_len / min(width, height) if min(width, height) < limit_side_len else 1.0
    return (max(32, round(int(width * ratio) / 32) * 32), max(32, round(int(height * ratio) / 32) * 32))


# -- detection: regions ------------------------------------------------------------------------------

def regions_from_map(prob: np.ndarray, src_width: int, src_height: int, *, thresh: float = THRESH,
                     box_thresh: float = BOX_THRESH, unclip_ratio: float = UNCLIP_RATIO,
                     dilate: bool = True) -> list[Region]:
    """Text regions from a DB probability map ([H, W], or [1, 1, H, W]) of a source
    image of src_width x src_height.

    Pixels above `thresh` form regions (grown by one pixel right and down with a 2x2
    dilation).  A region is kept when the mean probability over its own outline (its
    contour filled) is at least `box_thresh`; its minimum-area rectangle, taken over
    whole pixels, grows on every side by area * unclip_ratio / perimeter (DB shrinks
    text regions by that much when training) and is scaled to source pixels.
    """
    prob = np.asarray(prob, dtype=np.float32).reshape(prob.shape[-2:])
    map_h, map_w = prob.shape
    mask = (prob > thresh).astype(np.uint8)
    if dilate:
        mask = cv2.dilate(mask, np.ones((2, 2), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    scale = np.array([src_width / map_w, src_height / map_h], np.float32)
    regions = []
    for contour in contours[:MAX_CANDIDATES]:
        (cx, cy), (w, h), angle = cv2.minAreaRect(contour)
        if min(w, h) < MIN_SIZE:
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        inside = np.zeros((bh, bw), np.uint8)
        cv2.fillPoly(inside, [contour - (x, y)], 1)
        score = cv2.mean(prob[y:y + bh, x:x + bw], inside)[0]
        if score < box_thresh:
            continue
        w, h = w + 1, h + 1  # the contour runs through pixel centres; the pixels reach half a pixel further
        d = w * h * unclip_ratio / (2 * (w + h))
        if min(w, h) + 2 * d < MIN_SIZE + 2:
            continue
        corners = cv2.boxPoints(((cx + 0.5, cy + 0.5), (w + 2 * d, h + 2 * d), angle))
        regions.append(Region(corners * scale, score))
    return regions


def boxes_from_map(prob: np.ndarray, src_width: int, src_height: int, **kwargs) -> list[TextBox]:
    """The regions' axis-aligned bounding boxes, inside the image, top to bottom."""
    boxes = []
    for quad, score in regions_from_map(prob, src_width, src_height, **kwargs):
        x0, y0 = np.clip(np.round(quad.min(axis=0)), 0, (src_width, src_height)).astype(int)
        x1, y1 = np.clip(np.round(quad.max(axis=0)), 0, (src_width, src_height)).astype(int)
        if x1 > x0 and y1 > y0:
            boxes.append(TextBox(int(x0), int(y0), int(x1 - x0), int(y1 - y0), score))
    return sorted(boxes, key=lambda b: (b.y + b.height // 2, b.x))


def lines_from_map(prob: np.ndarray, src_width: int, src_height: int) -> list[np.ndarray]:
    """The text lines of a DB probability map as quadrilaterals in source pixels: the
    regions oriented along the page's text, fragments of one line joined, tall
    strips turned (which way up is left to the direction classifier)."""
    quads = [region.quad for region in regions_from_map(prob, src_width, src_height)]
    direction = page_direction(quads)
    return [turn_tall(q) for q in merge_fragments([orient(q, direction) for q in quads], direction)]


def strip_transform(quad: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
    """The perspective transform that cuts quad out as a level strip, and the strip's
    (width, height): the quad's own size, so the strip is scaled only once, later."""
    width, height = (max(1, round(s)) for s in quad_size(quad))
    level = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    return cv2.getPerspectiveTransform(np.asarray(quad, np.float32), level), (width, height)


# -- orientation and lines --------------------------------------------------------------------------

def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.hypot(*v))
    return v / n if n > 0 else np.array([1.0, 0.0], np.float32)


def quad_size(quad: np.ndarray) -> tuple[float, float]:
    """(width along the text, height across it) of a quadrilateral: its longer sides."""
    q = np.asarray(quad, np.float32)
    return (max(np.hypot(*(q[1] - q[0])), np.hypot(*(q[2] - q[3]))),
            max(np.hypot(*(q[3] - q[0])), np.hypot(*(q[2] - q[1]))))


def page_direction(quads: list[np.ndarray]) -> np.ndarray:
    """The unit vector most text runs along, up to sign (its angle in (-90, 90]
    degrees): the mean of the regions' long sides with angles doubled, so that 89
    and -89 degrees agree, weighted by length.  Level (1, 0) when no region is longer
    than it is tall."""
    acc = np.zeros(2)
    for q in quads:
        a, b = q[1] - q[0], q[2] - q[1]
        side = a if np.hypot(*a) >= np.hypot(*b) else b
        length = float(np.hypot(*side))
        if length >= 1.5 * min(np.hypot(*a), np.hypot(*b)):
            angle = np.arctan2(side[1], side[0])
            acc += length * np.array([np.cos(2 * angle), np.sin(2 * angle)])
    if not acc.any():
        return np.array([1.0, 0.0])
    half = np.arctan2(acc[1], acc[0]) / 2
    return np.array([np.cos(half), np.sin(half)])


def orient(quad: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The rectangle's corners ordered to read along its side nearest `direction`."""
    q = np.asarray(quad, np.float32)
    a, b = q[1] - q[0], q[2] - q[1]
    la, lb = float(np.hypot(*a)), float(np.hypot(*b))
    d, width, height = max(((a, la, lb), (-a, la, lb), (b, lb, la), (-b, lb, la)),
                           key=lambda side: float(_unit(side[0]) @ direction))
    return rectangle(q.mean(axis=0), _unit(d), width, height)


def rectangle(centre: np.ndarray, d: np.ndarray, width: float, height: float) -> np.ndarray:
    """The corners of the rectangle centred at `centre` reading along unit vector `d`."""
    n = np.array([-d[1], d[0]])  # "down" in the text: d turned 90 degrees clockwise on screen
    u, v = d * width / 2, n * height / 2
    return np.array([centre - u - v, centre + u - v, centre + u + v, centre - u + v], np.float32)


def turn_tall(quad: np.ndarray) -> np.ndarray:
    """A strip at least TALL times taller than wide holds a vertical line: read it
    down its long side (turned 90 degrees; the classifier settles which end is up)."""
    width, height = quad_size(quad)
    return np.roll(quad, -1, axis=0) if height >= TALL * width else quad


def _apart(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(along, across): b's centre from a's along and across the text, in the frame of
    the longer of the two (a short piece's own angle is too rough to measure far by)."""
    ref = a if quad_size(a)[0] >= quad_size(b)[0] else b
    d = _unit(ref[1] - ref[0])
    rel = b.mean(axis=0) - a.mean(axis=0)
    return float(rel @ d), float(rel @ np.array([-d[1], d[0]]))


def _same_row(a: np.ndarray, b: np.ndarray) -> bool:
    """a and b sit on one baseline: their centres are less than SAME_ROW of the smaller
    height apart across the text."""
    return abs(_apart(a, b)[1]) < SAME_ROW * min(quad_size(a)[1], quad_size(b)[1])


def _same_line(a: np.ndarray, b: np.ndarray) -> bool:
    """b continues a: on a's baseline, after it (it reaches further along the text) and
    less than MERGE_GAP line heights from a's end."""
    (wa, ha), (wb, hb) = quad_size(a), quad_size(b)
    along, _ = _apart(a, b)
    gap = along - (wa + wb) / 2
    return _same_row(a, b) and along + wb / 2 > wa / 2 and gap <= MERGE_GAP * max(ha, hb)


def merge_fragments(quads: list[np.ndarray], direction: np.ndarray) -> list[np.ndarray]:
    """Oriented quads with the pieces of one line joined: pieces on one baseline with a
    small gap become the minimum-area rectangle around them, read along the first."""
    order = sorted(range(len(quads)), key=lambda i: float(quads[i].mean(axis=0) @ direction))
    lines: list[list[np.ndarray]] = []
    for i in order:
        q = quads[i]
        for line in lines:
            if _same_line(line[-1], q):
                line.append(q)
                break
        else:
            lines.append([q])
    out = []
    for line in lines:
        if len(line) == 1:
            out.append(line[0])
        else:
            rect = cv2.boxPoints(cv2.minAreaRect(np.concatenate(line)))
            out.append(orient(rect, _unit(line[0][1] - line[0][0])))
    return out


def cls_windows(width: int, height: int) -> list[tuple[int, int]]:
    """The parts of a strip (width x height pixels) shown to the direction classifier,
    as (x, width) in strip pixels: a strip up to CLS_WIDTH wide at CLS_HEIGHT is shown
    whole; a longer one in up to CLS_WINDOWS windows of CLS_WIDTH at true scale, spread
    from its start to its end, whose scores are averaged.  Squeezed whole into 192
    pixels a long line loses the shapes that tell which way is up: an upside-down
    serif line 474 pixels long (at height 48) scored 0.93 for 0 degrees, while each
    of its three windows scored at least 0.94 for 180."""
    scaled = height and width * CLS_HEIGHT / height
    if scaled <= CLS_WIDTH:
        return [(0, width)]
    span = min(width, round(CLS_WIDTH * height / CLS_HEIGHT))
    count = min(CLS_WINDOWS, -(-round(scaled) // CLS_WIDTH))
    return [(round(x), span) for x in np.linspace(0, width - span, count)]


def upside_down(scores: np.ndarray, widths, look_again) -> np.ndarray:
    """Which strips to turn 180 degrees, from the direction classifier's [N, 2] scores
    (0 and 180 degrees) and the strips' widths (at equal height).

    A strip the classifier calls 180 with more than CLS_THRESH is turned; one it calls
    0 so is not; one it is unsure of follows the page (the width-weighted vote of the
    sure ones: a short word says little about its own way up).  A strip called against
    the page is seen again turned: `look_again(indices)` gives those strips' scores
    turned 180 degrees, and each way up counts half.  The classifier can be sure of 0
    degrees both ways up ("Subtotal" upside down on an upside-down receipt: 0.91, and
    turned upright 0.81), which averages to unsure.
    """
    scores = np.array(scores, np.float32).reshape(-1, 2)
    widths = np.asarray(widths, np.float32)

    def decide(page: bool) -> np.ndarray:
        return np.where(scores.max(axis=1) > CLS_THRESH, scores[:, 1] > CLS_THRESH, page)

    flip, sure = scores[:, 1] > CLS_THRESH, scores.max(axis=1) > CLS_THRESH
    page = float(widths[sure & flip].sum()) > float(widths[sure & ~flip].sum())
    doubtful = np.flatnonzero(decide(page) != page)
    if doubtful.size:
        turned = np.asarray(look_again(doubtful), np.float32).reshape(-1, 2)
        scores[doubtful] = (scores[doubtful] + turned[:, ::-1]) / 2
    return decide(page)


# -- reading order -----------------------------------------------------------------------------------

def reading_order(quads: list[np.ndarray]) -> list[int]:
    """The indices of oriented quads in reading order: columns one after another, each
    top to bottom, in the frame of the page's own text direction (so a tilted or
    upside-down page reads as it was written).

    Lines side by side in one row (same baseline) are each continued by the line just
    below them that overlaps them most; such chains are blocks (columns, paragraphs),
    read left block first when they sit side by side, upper first otherwise.  A narrow
    piece far right of its row's previous piece (a price, a page number) is read with
    that row instead of as a column of its own (its gap to the left is wider than it).
    """
    if not quads:
        return []
    d = _unit(sum(_unit(q[1] - q[0]) * quad_size(q)[0] for q in quads))
    n = np.array([-d[1], d[0]])
    centres = [q.mean(axis=0) for q in quads]
    sizes = [quad_size(q) for q in quads]
    u = [float(c @ d) for c in centres]
    v = [float(c @ n) for c in centres]

    rows: list[list[int]] = []
    for i in sorted(range(len(quads)), key=lambda i: v[i]):
        if rows and any(_same_row(quads[j], quads[i]) for j in rows[-1]):
            rows[-1].append(i)
        else:
            rows.append([i])
    attached: dict[int, list[int]] = {}
    blocks: list[list[int]] = []
    for row in rows:
        row.sort(key=lambda i: u[i])
        kept, prev = [], None
        for i in row:
            if prev is not None and (u[i] - sizes[i][0] / 2) - (u[prev] + sizes[prev][0] / 2) >= sizes[i][0]:
                attached.setdefault(kept[-1], []).append(i)
            else:
                kept.append(i)
            prev = i
        # each block continues with the line of this row that overlaps its last line most
        candidates = []
        for b, block in enumerate(blocks):
            j = block[-1]
            for i in kept:
                overlap = min(u[i] + sizes[i][0] / 2, u[j] + sizes[j][0] / 2) - \
                    max(u[i] - sizes[i][0] / 2, u[j] - sizes[j][0] / 2)
                below = v[i] - v[j] - (sizes[i][1] + sizes[j][1]) / 2
                if overlap > 0 and below <= max(sizes[i][1], sizes[j][1]):
                    candidates.append((overlap, b, i))
        taken_blocks, taken_lines = set(), set()
        for _, b, i in sorted(candidates, reverse=True):
            if b not in taken_blocks and i not in taken_lines:
                blocks[b].append(i)
                taken_blocks.add(b)
                taken_lines.add(i)
        blocks.extend([i] for i in kept if i not in taken_lines)

    def span(block):
        return (min(u[i] - sizes[i][0] / 2 for i in block), min(v[i] - sizes[i][1] / 2 for i in block),
                max(v[i] + sizes[i][1] / 2 for i in block))

    def before(a, b) -> int:
        (left_a, top_a, bottom_a), (left_b, top_b, bottom_b) = span(a), span(b)
        if min(bottom_a, bottom_b) > max(top_a, top_b):  # side by side: the left one first
            key_a, key_b = (left_a, top_a), (left_b, top_b)
        else:
            key_a, key_b = (top_a, left_a), (top_b, left_b)
        return -1 if key_a < key_b else 1 if key_a > key_b else 0

    blocks.sort(key=functools.cmp_to_key(before))
    return [k for block in blocks for i in block for k in (i, *attached.get(i, ()))]


# -- recognition -------------------------------------------------------------------------------------

def rec_batches(widths: list[int]) -> list[tuple[list[int], int]]:
    """Strips (by their width at the recognizer's height) grouped for the recognizer:
    (indices, canvas width) per run.  Canvas widths come in steps of about 1.25x, so a
    strip is padded by at most a quarter and a page's lines share a few input shapes
    (a runtime plans each new shape once; a batch shares one run's overhead)."""
    steps: dict[int, list[int]] = {}
    for i, width in enumerate(widths):
        step = 32
        while step < width:
            step = -(-step * 5 // 4 // 8) * 8  # x1.25, up to a multiple of 8
        steps.setdefault(step, []).append(i)
    return [(members[k:k + REC_BATCH], step) for step, members in sorted(steps.items())
            for k in range(0, len(members), REC_BATCH)]


def characters(metadata: Mapping[str, str]) -> list[str]:
    """The recognizer's classes from its "character" metadata: class 0 is the CTC blank,
    then one class per line of the metadata, then a space."""
    return ["<blank>", *metadata["character"].splitlines(), " "]


def ctc_decode(scores: np.ndarray, chars: list[str]) -> tuple[str, float]:
    """Greedy CTC: the best class per step, repeats merged, blanks dropped.
    scores is [T, C] (or [1, T, C]); returns the text and the mean score of its characters."""
    scores = np.asarray(scores).reshape(scores.shape[-2:])
    best = scores.argmax(axis=1)
    keep = best != 0
    keep[1:] &= best[1:] != best[:-1]
    if not keep.any():
        return "", 0.0
    text = "".join(chars[k] for k in best[keep])
    return text, float(scores.max(axis=1)[keep].mean())
