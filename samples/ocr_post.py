"""OCR geometry and post-processing shared by samples/ocr.py and benchmarks/ocr.py.

Nothing here touches pixels or an inference engine: it sizes the detector's input,
turns the detector's probability map into text boxes in source-image coordinates
(DB post-processing, with PP-OCRv4's settings as RapidOCR ships them), and turns the
recognizer's per-step class scores into text (CTC greedy decoding).
"""

from __future__ import annotations

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
REC_HEIGHT = 48  # the recognizer's input height


class TextBox(NamedTuple):
    """An axis-aligned text box in source-image pixels and its detection score."""

    x: int
    y: int
    width: int
    height: int
    score: float


def det_size(width: int, height: int, limit_side_len: int = LIMIT_SIDE_LEN) -> tuple[int, int]:
    """The detector's input size (width, height) for a source image: short side up to
    limit_side_len (never down), then each side rounded to a multiple of 32."""
    ratio = limit_side_len / min(width, height) if min(width, height) < limit_side_len else 1.0
    return (max(32, round(int(width * ratio) / 32) * 32), max(32, round(int(height * ratio) / 32) * 32))


def boxes_from_map(prob: np.ndarray, src_width: int, src_height: int, *, thresh: float = THRESH,
                   box_thresh: float = BOX_THRESH, unclip_ratio: float = UNCLIP_RATIO,
                   dilate: bool = True) -> list[TextBox]:
    """Text boxes from a DB probability map ([H, W], or [1, 1, H, W]) of a source image
    of src_width x src_height, in reading order.

    Pixels above `thresh` form regions (grown by one pixel right and down with a 2x2
    dilation); a region whose mean probability is at least `box_thresh` becomes a box,
    grown on every side by area * unclip_ratio / perimeter (DB shrinks text regions by
    that much when training), then scaled from map to source pixels.
    """
    prob = np.asarray(prob, dtype=np.float32).reshape(prob.shape[-2:])
    map_h, map_w = prob.shape
    mask = (prob > thresh).astype(np.uint8)
    if dilate:
        mask = cv2.dilate(mask, np.ones((2, 2), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    sx, sy = src_width / map_w, src_height / map_h
    boxes = []
    for contour in contours[:MAX_CANDIDATES]:
        x, y, w, h = cv2.boundingRect(contour)
        if min(w, h) < MIN_SIZE:
            continue
        score = float(prob[y:y + h, x:x + w].mean())
        if score < box_thresh:
            continue
        d = w * h * unclip_ratio / (2 * (w + h))
        if min(w, h) + 2 * d < MIN_SIZE + 2:
            continue
        x0 = int(np.clip(round((x - d) * sx), 0, src_width))
        y0 = int(np.clip(round((y - d) * sy), 0, src_height))
        x1 = int(np.clip(round((x + w + d) * sx), 0, src_width))
        y1 = int(np.clip(round((y + h + d) * sy), 0, src_height))
        if x1 > x0 and y1 > y0:
            boxes.append(TextBox(x0, y0, x1 - x0, y1 - y0, score))
    return reading_order(boxes)


def reading_order(boxes: list[TextBox]) -> list[TextBox]:
    """Top to bottom; boxes whose vertical centres lie within half a box height of each
    other form one line, read left to right."""
    lines: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: b.y + b.height / 2):
        centre = box.y + box.height / 2
        last = lines[-1][-1] if lines else None
        if last is not None and abs(centre - (last.y + last.height / 2)) < min(box.height, last.height) / 2:
            lines[-1].append(box)
        else:
            lines.append([box])
    return [b for line in lines for b in sorted(line, key=lambda b: b.x)]


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


class TextLine(NamedTuple):
    """One recognized line: its text, the mean score of its characters, and its box."""

    text: str
    confidence: float
    box: TextBox
