"""Classify a picture with one of the "light" model graphs shipped inside the onnx package.

    python samples/light_model.py [--model squeezenet] [--image samples/data/landscape.png] [--runs 10]
                                  [--device cpu|gpu]

The light models are the real architectures (SqueezeNet, ResNet-50, ...) with their
weights replaced by constants, so the scores show that the whole network runs, not
what is in the picture (samples/ocr.py runs real weights).  The picture is bound as a
VideoFrame with ImageNet's pre-processing as bind properties (RGB, 0..1, mean/std):
the binding centre-crops, resizes and normalizes it in one pass; the sample prints
the five largest outputs and the median latency of bind + evaluate.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import onnx

from mlrt.highlevel import (LearningModel, LearningModelBinding, LearningModelDevice, LearningModelDeviceKind,
                            LearningModelSession)
from mlrt.media import BitmapPixelFormat, LearningModelPixelRange, VideoFrame

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
HERE = Path(__file__).resolve().parent
DEVICES = {"cpu": LearningModelDeviceKind.CPU, "gpu": LearningModelDeviceKind.GPU}
IMAGENET = {"bitmap_pixel_format": BitmapPixelFormat.RGB8, "pixel_range": LearningModelPixelRange.ZERO_TO_ONE,
            "mean": (0.485, 0.456, 0.406), "std": (0.229, 0.224, 0.225)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="squeezenet",
                    help="light model name: " + ", ".join(p.stem[6:] for p in sorted(LIGHT.glob("light_*.onnx"))))
    ap.add_argument("--image", type=Path, default=HERE / "data" / "landscape.png")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--device", choices=sorted(DEVICES), default="cpu")
    args = ap.parse_args(argv)

    model = LearningModel.load(LIGHT / f"light_{args.model}.onnx")
    session = LearningModelSession(model, LearningModelDevice(DEVICES[args.device]))
    (inp,), out = model.input_features, model.output_features[0].name
    frame = VideoFrame.from_file(args.image)
    print(f"model light_{args.model}: input {inp.name} {list(inp.shape)} on {session.device.device_name}; "
          f"picture {frame.width}x{frame.height}")

    times = []
    binding = LearningModelBinding(session)
    for _ in range(max(1, args.runs)):
        t0 = time.perf_counter()
        binding.bind(inp.name, frame, **IMAGENET)
        scores = session.evaluate(binding).outputs[out]
        times.append(time.perf_counter() - t0)
    scores = scores.reshape(-1)
    top = np.argsort(scores)[::-1][:5]
    print(f"crop used: {tuple(binding.applied_bounds(inp.name))} (x, y, width, height)")
    print("top outputs:")
    for rank, k in enumerate(top, 1):
        print(f"  {rank}. class {k:4d}  score {scores[k]:.6f}")
    print(f"latency: median {statistics.median(times) * 1e3:.1f} ms over {len(times)} runs "
          f"(first run {times[0] * 1e3:.1f} ms, includes planning)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
