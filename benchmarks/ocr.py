"""The OCR sample (samples/ocr.py, mlrt's high-level API) vs the same pipeline written
the usual way for onnxruntime, side by side.

    python benchmarks/ocr.py [IMAGE] [--runs 10] [--blocks 3] [--block-runs 5] [--pause 1] [--device cpu|gpu] [--ort-only]

The onnxruntime pipeline is what one writes by hand: OpenCV decode and resize, numpy
normalization and HWC->CHW, an InferenceSession with default SessionOptions, one run
per text line.  Both pipelines share the engine-independent post-processing
(samples/ocr_post.py: DB boxes, CTC decoding), so the differences timed are decode,
pre-processing and inference.  Both are loaded in one process; first they are timed
interleaved (mlrt run, onnxruntime run, ...), then in blocks of runs of one pipeline
with a pause between blocks (onnxruntime's default thread spinning gets to settle, and
each pipeline gets the machine alone).  Prints medians per stage, the ratio
mlrt/onnxruntime end to end (below 1 means mlrt is faster) and whether both read the
same lines.  Quote ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples"))

import ocr_models  # noqa: E402
from ocr_post import REC_HEIGHT, TextLine, boxes_from_map, characters, ctc_decode, det_size  # noqa: E402

STAGES = ("read", "detection", "recognition", "total")


class OrtOcr:
    """PP-OCRv4 detection + recognition on onnxruntime, pre-processing in numpy/OpenCV."""

    def __init__(self, det_path: Path, rec_path: Path):
        import onnxruntime as ort

        self.det = ort.InferenceSession(str(det_path), providers=["CPUExecutionProvider"])
        self.rec = ort.InferenceSession(str(rec_path), providers=["CPUExecutionProvider"])
        self.chars = characters(self.rec.get_modelmeta().custom_metadata_map)

    @staticmethod
    def read(path: Path) -> np.ndarray:
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)  # BGR, as the models were trained
        if img is None:
            raise FileNotFoundError(f"cannot read image {path}")
        return img

    @staticmethod
    def _tensor(img: np.ndarray) -> np.ndarray:
        """BGR uint8 HWC -> float32 NCHW in -1..1."""
        x = img.astype(np.float32) * (2 / 255) - 1
        return np.ascontiguousarray(x.transpose(2, 0, 1)[None])

    def detect(self, img: np.ndarray):
        h, w = img.shape[:2]
        x = self._tensor(cv2.resize(img, det_size(w, h)))
        (prob,) = self.det.run(None, {"x": x})
        return boxes_from_map(prob, w, h)

    def recognize(self, img: np.ndarray, boxes) -> list[TextLine]:
        lines = []
        for box in boxes:
            crop = img[box.y:box.y + box.height, box.x:box.x + box.width]
            width = max(1, round(REC_HEIGHT * box.width / box.height))
            (scores,) = self.rec.run(None, {"x": self._tensor(cv2.resize(crop, (width, REC_HEIGHT)))})
            lines.append(TextLine(*ctc_decode(scores, self.chars), box))
        return lines

    def __call__(self, img: np.ndarray) -> list[TextLine]:
        return self.recognize(img, self.detect(img))


def load_sample():
    """samples/ocr.py as a module (it is named like this file, so load it by path)."""
    spec = importlib.util.spec_from_file_location("mlrt_ocr_sample", ROOT / "samples" / "ocr.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_stages(ocr, path: Path) -> tuple[list[TextLine], dict[str, float]]:
    """One OCR of the image at path by either pipeline, timed per stage (seconds)."""
    t0 = time.perf_counter()
    img = ocr.read(path)
    t1 = time.perf_counter()
    boxes = ocr.detect(img)
    t2 = time.perf_counter()
    lines = ocr.recognize(img, boxes)
    t3 = time.perf_counter()
    return lines, {"read": t1 - t0, "detection": t2 - t1, "recognition": t3 - t2, "total": t3 - t0}


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {s: statistics.median(r[s] for r in runs) for s in STAGES}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image", nargs="?", type=Path, default=ROOT / "samples" / "data" / "ocr.png")
    ap.add_argument("--runs", type=int, default=10, help="interleaved runs of each pipeline")
    ap.add_argument("--blocks", type=int, default=3, help="blocks of runs per pipeline")
    ap.add_argument("--block-runs", type=int, default=5, help="runs per block")
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between blocks")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu", help="mlrt's device")
    ap.add_argument("--ort-only", action="store_true", help="time the onnxruntime pipeline alone")
    args = ap.parse_args(argv)

    paths = ocr_models.fetch_all()
    pipelines = {"onnxruntime": OrtOcr(paths["det"], paths["rec"])}
    if not args.ort_only:
        sample = load_sample()
        pipelines = {"mlrt": sample.Ocr(paths["det"], paths["rec"], device=args.device), **pipelines}

    results = {}
    for name, ocr in pipelines.items():  # warm-up: first runs plan and allocate
        results[name] = [ln.text for ln in run_stages(ocr, args.image)[0]]
    print(f"{args.image.name}: {len(results['onnxruntime'])} lines")
    for i, text in enumerate(results["onnxruntime"]):
        print(f"  {i + 1}. {text}")
    if "mlrt" in results:
        same = results["mlrt"] == results["onnxruntime"]
        print("mlrt and onnxruntime read the same lines" if same else f"LINES DIFFER: mlrt read {results['mlrt']}")

    timings: dict[str, list[dict[str, float]]] = {name: [] for name in pipelines}
    for _ in range(args.runs):
        for name, ocr in pipelines.items():
            timings[name].append(run_stages(ocr, args.image)[1])
    blocks: dict[str, list[float]] = {name: [] for name in pipelines}
    for _ in range(args.blocks):
        for name, ocr in pipelines.items():
            time.sleep(args.pause)
            blocks[name].append(statistics.median(run_stages(ocr, args.image)[1]["total"] for _ in range(args.block_runs)))

    med = {name: _medians(runs) for name, runs in timings.items()}
    print(f"\n{'median ms':<14}" + "".join(f"{s:>13}" for s in STAGES) + f"   ({args.runs} interleaved runs)")
    for name, m in med.items():
        print(f"{name:<14}" + "".join(f"{m[s] * 1e3:>13.1f}" for s in STAGES))
    print(f"{'blocks, total':<14}" + "".join(f"{name:>13}" for name in blocks)
          + f"   ({args.blocks} blocks of {args.block_runs} runs, {args.pause:g} s pauses)")
    for b in range(args.blocks):
        print(f"{'  block ' + str(b + 1):<14}" + "".join(f"{blocks[name][b] * 1e3:>13.1f}" for name in blocks))
    if "mlrt" in med:
        ratio = med["mlrt"]["total"] / med["onnxruntime"]["total"]
        block_ratio = statistics.median(blocks["mlrt"]) / statistics.median(blocks["onnxruntime"])
        print(f"ratio mlrt/onnxruntime end to end: {ratio:.2f} interleaved, {block_ratio:.2f} in blocks")
        return 0 if results["mlrt"] == results["onnxruntime"] else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
