"""Read the text in an image with PP-OCR on mlrt's Windows ML-style API.

    python samples/ocr.py [IMAGE] [--device cpu|gpu] [--runs N]

Three models do the work (fetched on first use by samples/ocr_models.py): a detector
that marks where text is, a direction classifier that tells a line from one upside
down, and a recognizer that reads one line of text at a time.

- Detection: the frame is copied, scaled, into a frame whose sides are multiples of 32
  (the short side brought up to 736 pixels), which the detector takes whole; its
  probability map becomes rotated rectangles in the source image, each scored over
  its own pixels, oriented along the page's text, with the fragments of one line
  joined (samples/ocr_post.py).
- Strips: each line is cut out level with a perspective warp, OpenCV's
  cv2.warpPerspective on the frame's pixels, wrapped in a VideoFrame: the media API
  scales and crops axis-aligned rectangles (copy_to, bitmap_bounds) and has no
  perspective warp.  A strip 1.5 times taller than wide (vertical text) is read
  turned 90 degrees.
- Direction: every strip is copied, scaled to height 48, into 48 x 192 frames, whole
  or (a long one) as up to three windows at true scale (samples/ocr_post.py says
  why); the frames are bound as one batch to the classifier, and a strip it calls
  upside down is turned 180 degrees.
- Recognition: strips of similar length are copied, scaled to height 48, into frames of
  one width (mid-gray beyond each strip, as the recognizer was trained) and bound as
  batches; the recognizer's height is fixed to 48 by a named-dimension override and its
  free width is the frames'.  Its per-step class scores decode to text (CTC).

Scaling, copying, BGRA -> BGR planes and the -1..1 range are the binding's and
copy_to's work: on the CPU, or with --device gpu in OpenCL kernels that write the
models' input tensors in device memory (the page is uploaded once, scaled for the
detector there; strips are uploaded as they are bound).  Prints each line, in reading
order, with its quadrilateral (the text's top-left, top-right, bottom-right and
bottom-left corners in source pixels) and confidence, then the time per stage.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import cv2
import numpy as np

from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession, LearningModelSessionOptions)
from mlrt.media import BitmapBounds, BitmapPixelFormat, LearningModelPixelRange, VideoFrame

import ocr_models
from ocr_post import (CLS_HEIGHT, CLS_WIDTH, REC_HEIGHT, TEXT_SCORE, TextLine, characters, cls_windows, ctc_decode,
                      det_size, lines_from_map, reading_order, rec_batches, strip_transform, upside_down)

HERE = Path(__file__).resolve().parent
DEVICES = {"cpu": LearningModelDeviceKind.CPU, "gpu": LearningModelDeviceKind.GPU}
MINUS_ONE_TO_ONE = LearningModelPixelRange.MINUS_ONE_TO_ONE  # the models take (x / 255 - 0.5) / 0.5
GRAY = 128  # what pads a strip: about 0 in -1..1, as PaddleOCR pads its tensors


class Strip:
    """One line cut out level: its frame and its quadrilateral in the source image."""

    __slots__ = ("frame", "quad")

    def __init__(self, frame: VideoFrame, quad: np.ndarray):
        self.frame, self.quad = frame, quad

    def scaled_width(self, height: int) -> int:
        return max(1, math.ceil(height * self.frame.width / self.frame.height))

    def turned(self) -> "Strip":
        """The strip turned 180 degrees: its pixels, and its corners (top-left now bottom-right)."""
        fmt = self.frame.pixel_format
        return Strip(VideoFrame.from_numpy(cv2.rotate(self.frame.to_numpy(), cv2.ROTATE_180), fmt),
                     np.roll(self.quad, 2, axis=0))


def _canvases(count: int, width: int, height: int) -> list[VideoFrame]:
    """count mid-gray BGR8 frames of one size, for strips to be copied into."""
    pixels = np.full((count, height, width, 3), GRAY, np.uint8)
    return [VideoFrame.from_numpy(p, BitmapPixelFormat.BGR8) for p in pixels]


class Ocr:
    """PP-OCR text detection, direction and recognition on one device."""

    def __init__(self, det_path: Path, rec_path: Path, cls_path: Path, device: str = "cpu"):
        self.device = LearningModelDevice(DEVICES[device])
        det = LearningModel.load(det_path)
        self.det = LearningModelSession(det, self.device)
        self.det_output = det.output_features[0].name
        cls = LearningModel.load(cls_path)
        self.cls = LearningModelSession(cls, self.device)  # free height and width: the frames' 48 x 192
        self.cls_output = cls.output_features[0].name
        rec = LearningModel.load(rec_path)
        self.chars = characters(rec.metadata)  # the alphabet travels in the model's metadata
        options = LearningModelSessionOptions()
        options.override_named_dimension("?", REC_HEIGHT)  # the recognizer's height is a named free dimension
        self.rec = LearningModelSession(rec, self.device, options)
        self.rec_output = rec.output_features[0].name

    @staticmethod
    def read(path: Path) -> VideoFrame:
        """The image as a CPU frame (the strips are cut from host pixels; detection
        uploads it to the device when the device is a GPU)."""
        return VideoFrame.from_file(path)

    def detect(self, frame: VideoFrame) -> list[np.ndarray]:
        """The text lines' quadrilaterals in source pixels (ocr_post.lines_from_map)."""
        width, height = det_size(frame.width, frame.height)
        scaled = VideoFrame.empty(width, height, BitmapPixelFormat.BGRA8, device=self.device.memory)
        frame.copy_to(scaled)
        binding = LearningModelBinding(self.det)
        binding.bind("x", scaled, pixel_range=MINUS_ONE_TO_ONE)
        prob = self.det.evaluate(binding).outputs[self.det_output]
        return lines_from_map(prob, frame.width, frame.height)

    @staticmethod
    def strips(frame: VideoFrame, quads: list[np.ndarray]) -> list[Strip]:
        """Each quadrilateral cut out of the frame as a level strip at its own size."""
        fmt, pixels = frame.to_cpu().packed()  # NV12 arrives as BGRA8
        strips = []
        for quad in quads:
            warp, size = strip_transform(quad)
            level = cv2.warpPerspective(pixels, warp, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            strips.append(Strip(VideoFrame.from_numpy(level, fmt), quad))
        return strips

    def classify(self, strips: list[Strip]) -> list[Strip]:
        """The strips with those the direction classifier calls upside down turned."""
        if not strips:
            return strips
        flips = upside_down(self.direction_scores(strips), [s.frame.width / s.frame.height for s in strips],
                            lambda doubtful: self.direction_scores([strips[i].turned() for i in doubtful]))
        return [s.turned() if flip else s for s, flip in zip(strips, flips)]

    def direction_scores(self, strips: list[Strip]) -> np.ndarray:
        """The classifier's [N, 2] scores (0 and 180 degrees) per strip: the mean over
        its windows (cls_windows), all strips' windows bound as one batch of frames."""
        windows = [(i, x, w) for i, s in enumerate(strips) for x, w in cls_windows(s.frame.width, s.frame.height)]
        frames = _canvases(len(windows), CLS_WIDTH, CLS_HEIGHT)
        for (i, x, width), canvas in zip(windows, frames):
            strip = strips[i].frame
            scaled = min(CLS_WIDTH, math.ceil(CLS_HEIGHT * width / strip.height))
            strip.copy_to(canvas, source_bounds=BitmapBounds(x, 0, width, strip.height),
                          destination_bounds=BitmapBounds(0, 0, scaled, CLS_HEIGHT))
        binding = LearningModelBinding(self.cls)
        binding.bind("x", frames, pixel_range=MINUS_ONE_TO_ONE)
        scores = np.asarray(self.cls.evaluate(binding).outputs[self.cls_output], np.float32).reshape(-1, 2)
        owner = np.array([i for i, _, _ in windows])
        sums = np.stack([np.bincount(owner, scores[:, k], len(strips)) for k in (0, 1)], axis=1)
        return sums / np.bincount(owner, minlength=len(strips))[:, None]

    def read_strips(self, strips: list[Strip]) -> list[tuple[str, float]]:
        """(text, confidence) of each strip, read in batches of similar length."""
        results: list[tuple[str, float]] = [("", 0.0)] * len(strips)
        widths = [s.scaled_width(REC_HEIGHT) for s in strips]
        binding = LearningModelBinding(self.rec)
        for batch, canvas_width in rec_batches(widths):
            frames = _canvases(len(batch), canvas_width, REC_HEIGHT)
            for i, canvas in zip(batch, frames):
                strips[i].frame.copy_to(canvas, destination_bounds=BitmapBounds(0, 0, widths[i], REC_HEIGHT))
            binding.bind("x", frames, pixel_range=MINUS_ONE_TO_ONE)
            scores = self.rec.evaluate(binding).outputs[self.rec_output]
            for i, row in zip(batch, scores):
                results[i] = ctc_decode(row, self.chars)
        return results

    def recognize(self, frame: VideoFrame, quads: list[np.ndarray]) -> list[TextLine]:
        """The lines read from the frame at quads, in reading order; lines read with a
        mean character score under TEXT_SCORE (mostly not text) are left out."""
        strips = self.classify(self.strips(frame, quads))
        texts = self.read_strips(strips)
        bounds = np.array([frame.width, frame.height], np.float32)
        lines = []
        for i in reading_order([s.quad for s in strips]):
            text, confidence = texts[i]
            if text.strip() and confidence >= TEXT_SCORE:
                lines.append(TextLine(text, confidence, np.clip(strips[i].quad, 0, bounds)))
        return lines

    def __call__(self, frame: VideoFrame) -> list[TextLine]:
        return self.recognize(frame, self.detect(frame))


def format_line(line: TextLine) -> str:
    """A printed line: four x,y corners, the confidence, two spaces, the text."""
    corners = "".join(f"{f'{x},{y}':>11}" for x, y in np.round(line.quad).astype(int))
    return f"{corners}{line.confidence:>7.3f}  {line.text}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image", nargs="?", type=Path, default=HERE / "data" / "ocr.png")
    ap.add_argument("--device", choices=sorted(DEVICES), default="cpu")
    ap.add_argument("--runs", type=int, default=1, help="OCR the image this many times and report medians")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    paths = ocr_models.fetch_all()
    ocr = Ocr(paths["det"], paths["rec"], paths["cls"], args.device)
    load = time.perf_counter() - t0
    stages: dict[str, list[float]] = {"read": [], "detection": [], "recognition": [], "total": []}
    for _ in range(max(1, args.runs)):
        t0 = time.perf_counter()
        frame = ocr.read(args.image)
        t1 = time.perf_counter()
        quads = ocr.detect(frame)
        t2 = time.perf_counter()
        lines = ocr.recognize(frame, quads)
        t3 = time.perf_counter()
        for stage, t in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
            stages[stage].append(t)

    print(f"{args.image.name} ({frame.width}x{frame.height}) on {ocr.device.device_name}: {len(lines)} lines")
    print(f"{'top-left':>11}{'top-right':>11}{'bot-right':>11}{'bot-left':>11}{'conf':>7}  text")
    for line in lines:
        print(format_line(line))
    runs = f"median of {len(stages['total'])} runs" if len(stages["total"]) > 1 else "first run, includes planning"
    print(f"time: fetch+load {load * 1e3:.0f} ms; "
          + ", ".join(f"{s} {statistics.median(v) * 1e3:.1f} ms" for s, v in stages.items()) + f" ({runs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
