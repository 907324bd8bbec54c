"""Read the text in an image with PP-OCRv4 on mlrt's Windows ML-style API.

    python samples/ocr.py [IMAGE] [--device cpu|gpu] [--runs N]

Two models do the work (fetched on first use by samples/ocr_models.py): a detector
that marks where text is, and a recognizer that reads one line of text at a time.

- Detection: the frame is copied, scaled, into a frame whose sides are multiples of 32
  (the short side brought up to 736 pixels), which the detector takes whole; its
  probability map becomes boxes in the source image (samples/ocr_post.py).
- Recognition: each box is bound as bounds on the source frame; the recognizer's input
  height is fixed to 48 by a named-dimension override and mlrt sizes its free width
  to keep the box's aspect ratio.  Its per-step class scores decode to text (CTC).

No pixel is touched by hand: scaling, cropping, BGRA -> BGR planes and the -1..1
range are the binding's work, on the CPU or, with --device gpu, in OpenCL kernels on
a frame that stays in device memory.  Prints each line with its box (x, y, width,
height in source pixels) and confidence, then the time per stage.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession, LearningModelSessionOptions)
from mlrt.media import BitmapBounds, BitmapPixelFormat, LearningModelPixelRange, VideoFrame

import ocr_models
from ocr_post import REC_HEIGHT, TextBox, TextLine, boxes_from_map, characters, ctc_decode, det_size

HERE = Path(__file__).resolve().parent
DEVICES = {"cpu": LearningModelDeviceKind.CPU, "gpu": LearningModelDeviceKind.GPU}
MINUS_ONE_TO_ONE = LearningModelPixelRange.MINUS_ONE_TO_ONE  # both models take (x / 255 - 0.5) / 0.5


class Ocr:
    """PP-OCRv4 text detection + recognition on one device."""

    def __init__(self, det_path: Path, rec_path: Path, device: str = "cpu"):
        self.device = LearningModelDevice(DEVICES[device])
        det = LearningModel.load(det_path)
        self.det = LearningModelSession(det, self.device)
        self.det_output = det.output_features[0].name
        rec = LearningModel.load(rec_path)
        self.chars = characters(rec.metadata)  # the alphabet travels in the model's metadata
        options = LearningModelSessionOptions()
        options.override_named_dimension("?", REC_HEIGHT)  # the recognizer's height is a named free dimension
        self.rec = LearningModelSession(rec, self.device, options)
        self.rec_output = rec.output_features[0].name

    def read(self, path: Path) -> VideoFrame:
        frame = VideoFrame.from_file(path)
        return frame.to_gpu() if self.device.is_gpu else frame

    def detect(self, frame: VideoFrame) -> list[TextBox]:
        width, height = det_size(frame.width, frame.height)
        scaled = VideoFrame.empty(width, height, BitmapPixelFormat.BGRA8, gpu=frame.is_gpu)
        frame.copy_to(scaled)
        binding = LearningModelBinding(self.det)
        binding.bind("x", scaled, pixel_range=MINUS_ONE_TO_ONE)
        prob = self.det.evaluate(binding).outputs[self.det_output]
        return boxes_from_map(prob, frame.width, frame.height)

    def recognize(self, frame: VideoFrame, boxes: list[TextBox]) -> list[TextLine]:
        lines = []
        binding = LearningModelBinding(self.rec)
        for box in boxes:
            binding.bind("x", frame, bitmap_bounds=BitmapBounds(box.x, box.y, box.width, box.height),
                         pixel_range=MINUS_ONE_TO_ONE)
            scores = self.rec.evaluate(binding).outputs[self.rec_output]
            lines.append(TextLine(*ctc_decode(scores, self.chars), box))
        return lines

    def __call__(self, frame: VideoFrame) -> list[TextLine]:
        return self.recognize(frame, self.detect(frame))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image", nargs="?", type=Path, default=HERE / "data" / "ocr.png")
    ap.add_argument("--device", choices=sorted(DEVICES), default="cpu")
    ap.add_argument("--runs", type=int, default=1, help="OCR the image this many times and report medians")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    ocr = Ocr(ocr_models.fetch("det"), ocr_models.fetch("rec"), args.device)
    load = time.perf_counter() - t0
    stages: dict[str, list[float]] = {"read": [], "detection": [], "recognition": [], "total": []}
    for _ in range(max(1, args.runs)):
        t0 = time.perf_counter()
        frame = ocr.read(args.image)
        t1 = time.perf_counter()
        boxes = ocr.detect(frame)
        t2 = time.perf_counter()
        lines = ocr.recognize(frame, boxes)
        t3 = time.perf_counter()
        for stage, t in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t3 - t0)):
            stages[stage].append(t)

    print(f"{args.image.name} ({frame.width}x{frame.height}) on {ocr.device.device_name}: {len(lines)} lines")
    print(f"{'x':>6}{'y':>6}{'w':>6}{'h':>6}{'conf':>7}  text")
    for line in lines:
        b = line.box
        print(f"{b.x:>6}{b.y:>6}{b.width:>6}{b.height:>6}{line.confidence:>7.3f}  {line.text}")
    runs = f"median of {len(stages['total'])} runs" if len(stages["total"]) > 1 else "first run, includes planning"
    print(f"time: fetch+load {load * 1e3:.0f} ms; "
          + ", ".join(f"{s} {statistics.median(v) * 1e3:.1f} ms" for s, v in stages.items()) + f" ({runs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
