"""Run one of the "light" model graphs shipped inside the onnx package on an image.

    python samples/light_model.py [--model squeezenet] [--image samples/data/landscape.png] [--runs 10]

The light models are the real architectures (SqueezeNet, ResNet-50, ...) with their
weights replaced by constants, so the scores show that the whole network runs, not
what is in the picture.  The image is resized (short side to 224, centre crop),
laid out as 1x3x224x224 float32 and fed through mlrt.lowlevel; the sample prints
the five largest outputs and the median latency.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import onnx
from PIL import Image

import mlrt.lowlevel as ml

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
HERE = Path(__file__).resolve().parent


def load_image(path: Path, size: int = 224) -> np.ndarray:
    img = Image.open(path).convert("RGB")
    scale = size / min(img.size)
    img = img.resize((max(size, round(img.width * scale)), max(size, round(img.height * scale))), Image.BILINEAR)
    left, top = (img.width - size) // 2, (img.height - size) // 2
    img = img.crop((left, top, left + size, top + size))
    x = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return ((x - mean) / std)[None]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="squeezenet",
                    help="light model name: " + ", ".join(p.stem[6:] for p in sorted(LIGHT.glob("light_*.onnx"))))
    ap.add_argument("--image", type=Path, default=HERE / "data" / "landscape.png")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args(argv)

    session = ml.InferenceSession(str(LIGHT / f"light_{args.model}.onnx"))
    inp = session.get_inputs()[0]
    x = load_image(args.image, size=inp.shape[-1])
    print(f"model light_{args.model}: input {inp.name} {inp.shape}, providers {session.get_providers()}")

    times = []
    for _ in range(max(1, args.runs)):
        t0 = time.perf_counter()
        (scores,) = session.run(None, {inp.name: x})
        times.append(time.perf_counter() - t0)
    scores = scores.reshape(-1)
    top = np.argsort(scores)[::-1][:5]
    print("top outputs:")
    for rank, k in enumerate(top, 1):
        print(f"  {rank}. class {k:4d}  score {scores[k]:.6f}")
    print(f"latency: median {statistics.median(times) * 1e3:.1f} ms over {len(times)} runs "
          f"(first run {times[0] * 1e3:.1f} ms, includes planning)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
