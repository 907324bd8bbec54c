"""Find the text in every frame of a video with PP-OCRv4's detector and evaluate_stream.

    python samples/video.py [VIDEO] [--device cpu|gpu] [--max-frames N] [--depth D]

`session.evaluate_stream(VideoSource(path), "x")` decodes the video on one thread
while up to D frames are tensorized and evaluated at once, and yields the results in
the video's order.  The detector's free height and width are fixed for the video's
size (multiples of 32) with named-dimension overrides, so every frame is scaled
whole onto that size by the binding (`bitmap_bounds` = the whole frame).  Prints,
per frame, its time in the video and the text boxes found (x, y, width, height in
video pixels), then the frames per second.  Without VIDEO it writes a short clip of
the bundled OCR picture scrolling by (OpenCV's VideoWriter) and reads that.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from mlrt.highlevel import (LearningModel, LearningModelDevice, LearningModelDeviceKind, LearningModelSession,
                            LearningModelSessionOptions)
from mlrt.media import LearningModelPixelRange, VideoSource

import ocr_models
from ocr_post import boxes_from_map, det_size

HERE = Path(__file__).resolve().parent
DEVICES = {"cpu": LearningModelDeviceKind.CPU, "gpu": LearningModelDeviceKind.GPU}


def write_demo_clip(path: Path, frames: int = 24, fps: float = 12.0) -> Path:
    """A clip of the bundled OCR picture sliding up through a 640x360 window."""
    page = cv2.imread(str(HERE / "data" / "ocr.png"))
    w, h = 640, 360
    page = cv2.resize(page, (w, round(page.shape[0] * w / page.shape[1])), interpolation=cv2.INTER_AREA)
    canvas = np.full((page.shape[0] + 2 * h, w, 3), 255, np.uint8)
    canvas[h:h + page.shape[0]] = page
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    for i in range(frames):
        top = h // 2 + round(i * page.shape[0] / max(frames - 1, 1))
        writer.write(np.ascontiguousarray(canvas[top:top + h]))
    writer.release()
    return path


def detector(width: int, height: int, device: str) -> tuple[LearningModelSession, str]:
    model = LearningModel.load(ocr_models.fetch("det"))
    (x,) = model.input_features
    options = LearningModelSessionOptions()
    map_w, map_h = det_size(width, height)
    # the model names its free dimensions N, H, W "p2o.DynamicDimension.0/1/2"
    options.override_named_dimension("p2o.DynamicDimension.1", map_h)
    options.override_named_dimension("p2o.DynamicDimension.2", map_w)
    session = LearningModelSession(model, LearningModelDevice(DEVICES[device]), options)
    return session, model.output_features[0].name


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("video", nargs="?", type=Path)
    ap.add_argument("--device", choices=sorted(DEVICES), default="cpu")
    ap.add_argument("--max-frames", type=int, default=None)
    ap.add_argument("--depth", type=int, default=3, help="frames in flight at once")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = args.video or write_demo_clip(Path(tmp) / "demo.avi")
        source = VideoSource(path, max_frames=args.max_frames)
        width, height = source.width, source.height
        session, output = detector(width, height, args.device)
        print(f"{path.name}: {width}x{height} at {source.fps:.1f} fps, detector on {session.device.device_name}")
        count, started = 0, time.perf_counter()
        stream = session.evaluate_stream(source, "x", depth=args.depth, bitmap_bounds=(0, 0, width, height),
                                         pixel_range=LearningModelPixelRange.MINUS_ONE_TO_ONE)
        for frame, result in stream:
            boxes = boxes_from_map(result.outputs[output], frame.width, frame.height)
            stamp = f"{frame.timestamp:6.2f} s" if frame.timestamp is not None else f"#{count:5d}"
            print(f"{stamp}  {len(boxes)} text boxes  " + " ".join(f"({b.x},{b.y},{b.width},{b.height})"
                                                                 for b in boxes))
            count += 1
        source.close()
        seconds = time.perf_counter() - started
    print(f"{count} frames in {seconds:.2f} s: {count / seconds:.1f} frames per second (decode, tensorize, "
          f"detect, post-process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
