"""The OCR sample (samples/ocr.py, mlrt's high-level API) against other readers.

    python benchmarks/ocr.py [IMAGE] [--runs 10] [--blocks 3] [--block-runs 5] [--pause 1] [--device cpu|gpu]
                             [--ort-only]
    python benchmarks/ocr.py --testset [--rounds 3] [--device cpu|gpu]

One image (samples/data/ocr.png by default): the sample against the same pipeline
written the usual way for onnxruntime: OpenCV decode, warps and resizes, numpy
normalization, HWC->CHW and padding, InferenceSessions with default SessionOptions.
Both share the engine-independent geometry and post-processing (samples/ocr_post.py:
DB lines, direction decisions, reading order, CTC decoding), so the differences timed
are decode, pre-processing and inference.  Both are loaded in one process; first they
are timed interleaved (mlrt run, onnxruntime run, ...), then in blocks of runs of one
pipeline with a pause between blocks (onnxruntime's default thread spinning gets to
settle, and each pipeline gets the machine alone).  Prints medians per stage, the
ratio mlrt/onnxruntime end to end (below 1 means mlrt is faster) and whether both read
the same lines.  Quote ratios, not absolute times.

--testset: the documents of samples/data/ocr_testset.py (tilted, in perspective,
photographed, upside down, in columns, receipts, paragraphs), read by the sample, by
rapidocr_onnxruntime 1.4.4 (the same PP-OCR models with its own pre- and
post-processing) when it is importable, and by the onnxruntime pipeline above when
onnxruntime is.  rapidocr is no test dependency (it requires opencv-python, which
clashes with opencv-python-headless); to measure with it:
`pip install --no-deps rapidocr_onnxruntime==1.4.4 pyclipper shapely six pyyaml`.
Prints the lines each reader read per kind of document (ocr_testset.score: found
where the text is, within its character error rate), then end-to-end times (file to
lines) per reader: the median of --rounds per page, pages interleaved reader by
reader in one process, summed over the set.  Exits 1 when the sample reads fewer
lines than rapidocr on some kind.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples"))
sys.path.insert(0, str(ROOT / "samples" / "data"))

import ocr_models  # noqa: E402
from ocr_post import (CLS_HEIGHT, CLS_WIDTH, REC_HEIGHT, TEXT_SCORE, TextLine, characters, cls_windows,  # noqa: E402
                      ctc_decode, det_size, lines_from_map, reading_order, rec_batches, strip_transform, upside_down)

STAGES = ("read", "detection", "recognition", "total")


class OrtOcr:
    """The sample's pipeline on onnxruntime, pre-processing in numpy/OpenCV."""

    def __init__(self, det_path: Path, rec_path: Path, cls_path: Path):
        import onnxruntime as ort

        self.det, self.rec, self.cls = (ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
                                        for p in (det_path, rec_path, cls_path))
        self.chars = characters(self.rec.get_modelmeta().custom_metadata_map)

    @staticmethod
    def read(path: Path) -> np.ndarray:
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)  # BGR, as the models were trained
        if img is None:
            raise FileNotFoundError(f"cannot read image {path}")
        return img

    @staticmethod
    def _tensor(images: list[np.ndarray], width: int) -> np.ndarray:
        """BGR uint8 HWC images of one height -> float32 NCHW in -1..1, zero-padded to width."""
        out = np.zeros((len(images), 3, images[0].shape[0], width), np.float32)
        for k, img in enumerate(images):
            out[k, :, :, :img.shape[1]] = img.transpose(2, 0, 1) * (2 / 255) - 1
        return out

    def detect(self, img: np.ndarray) -> list[np.ndarray]:
        h, w = img.shape[:2]
        x = self._tensor([cv2.resize(img, det_size(w, h))], det_size(w, h)[0])
        (prob,) = self.det.run(None, {"x": x})
        return lines_from_map(prob, w, h)

    @staticmethod
    def _scaled(strip: np.ndarray, height: int, width: int | None = None) -> np.ndarray:
        width = width or max(1, -(-height * strip.shape[1] // strip.shape[0]))
        return cv2.resize(strip, (width, height))

    def _direction_scores(self, strips: list[np.ndarray]) -> np.ndarray:
        windows = [(i, x, w) for i, s in enumerate(strips) for x, w in cls_windows(s.shape[1], s.shape[0])]
        images = [self._scaled(strips[i][:, x:x + w], CLS_HEIGHT,
                               min(CLS_WIDTH, -(-CLS_HEIGHT * w // strips[i].shape[0]))) for i, x, w in windows]
        (scores,) = self.cls.run(None, {"x": self._tensor(images, CLS_WIDTH)})
        owner = np.array([i for i, _, _ in windows])
        sums = np.stack([np.bincount(owner, scores[:, k], len(strips)) for k in (0, 1)], axis=1)
        return sums / np.bincount(owner, minlength=len(strips))[:, None]

    def recognize(self, img: np.ndarray, quads: list[np.ndarray]) -> list[TextLine]:
        strips = []
        for quad in quads:
            warp, size = strip_transform(quad)
            strips.append(cv2.warpPerspective(img, warp, size, flags=cv2.INTER_LINEAR,
                                              borderMode=cv2.BORDER_REPLICATE))
        if strips:
            flips = upside_down(self._direction_scores(strips), [s.shape[1] / s.shape[0] for s in strips],
                                lambda doubtful: self._direction_scores([cv2.rotate(strips[i], cv2.ROTATE_180)
                                                                         for i in doubtful]))
            strips = [cv2.rotate(s, cv2.ROTATE_180) if f else s for s, f in zip(strips, flips)]
            quads = [np.roll(q, 2, axis=0) if f else q for q, f in zip(quads, flips)]
        texts: list[tuple[str, float]] = [("", 0.0)] * len(strips)
        scaled = [self._scaled(s, REC_HEIGHT) for s in strips]
        for batch, width in rec_batches([s.shape[1] for s in scaled]):
            (scores,) = self.rec.run(None, {"x": self._tensor([scaled[i] for i in batch], width)})
            for i, row in zip(batch, scores):
                texts[i] = ctc_decode(row, self.chars)
        h, w = img.shape[:2]
        return [TextLine(texts[i][0], texts[i][1], np.clip(quads[i], 0, (w, h))) for i in reading_order(quads)
                if texts[i][0].strip() and texts[i][1] >= TEXT_SCORE]

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
    quads = ocr.detect(img)
    t2 = time.perf_counter()
    lines = ocr.recognize(img, quads)
    t3 = time.perf_counter()
    return lines, {"read": t1 - t0, "detection": t2 - t1, "recognition": t3 - t2, "total": t3 - t0}


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {s: statistics.median(r[s] for r in runs) for s in STAGES}


def one_image(args) -> int:
    paths = ocr_models.fetch_all()
    pipelines = {"onnxruntime": OrtOcr(paths["det"], paths["rec"], paths["cls"])}
    if not args.ort_only:
        sample = load_sample()
        pipelines = {"mlrt": sample.Ocr(paths["det"], paths["rec"], paths["cls"], device=args.device), **pipelines}

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


# -- the test set --------------------------------------------------------------------------------------

def readers(device: str) -> dict[str, object]:
    """name -> a callable from an image path to [(text, quadrilateral)], for every reader
    that can run here: the sample always, rapidocr and the onnxruntime pipeline when
    importable."""
    paths = ocr_models.fetch_all()
    sample = load_sample().Ocr(paths["det"], paths["rec"], paths["cls"], device=device)
    out = {f"sample ({device})": lambda path: [(ln.text, ln.quad) for ln in sample(sample.read(path))]}
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:
        print(f"rapidocr_onnxruntime is not importable ({exc}): not measured", file=sys.stderr)
    else:
        rapid = RapidOCR()
        out["rapidocr"] = lambda path: [(text, box) for box, text, _ in (rapid(str(path))[0] or [])]
    if importlib.util.find_spec("onnxruntime") is not None:
        ort_ocr = OrtOcr(paths["det"], paths["rec"], paths["cls"])
        out["sample on ort"] = lambda path: [(ln.text, ln.quad) for ln in ort_ocr(ort_ocr.read(path))]
    return out


def testset(args) -> int:
    import ocr_testset

    pages = ocr_testset.pages()
    named = readers(args.device)
    with tempfile.TemporaryDirectory(prefix="mlrt-ocr-testset-") as tmp:
        files = [page.save(Path(tmp)) for page in pages]
        read = {name: [ocr_testset.score(page, reader(path)).count for page, path in zip(pages, files)]
                for name, reader in named.items()}  # also the warm-up: first runs plan and allocate
        seconds: dict[str, list[list[float]]] = {name: [[] for _ in pages] for name in named}
        order = list(named.items())
        for r in range(args.rounds):
            for k, path in enumerate(files):
                for name, reader in order[r % len(order):] + order[:r % len(order)]:  # who goes first rotates
                    t0 = time.perf_counter()
                    reader(path)
                    seconds[name][k].append(time.perf_counter() - t0)

    names = list(named)
    width = max(12, *(len(n) + 2 for n in names))
    print(f"{len(pages)} pages, {sum(len(p.lines) for p in pages)} lines; lines read per kind "
          f"(within {ocr_testset.MAX_CER:.0%} character error rate, spaces aside)")
    print(f"{'kind':<14}{'pages':>6}{'lines':>7}" + "".join(f"{n:>{width}}" for n in names))
    for kind in ocr_testset.KINDS + ("all",):
        ks = [k for k, p in enumerate(pages) if kind in ("all", p.kind)]
        print(f"{kind:<14}{len(ks):>6}{sum(len(pages[k].lines) for k in ks):>7}"
              + "".join(f"{sum(read[n][k] for k in ks):>{width}}" for n in names))
    totals = {n: sum(statistics.median(t) for t in seconds[n]) for n in names}
    print(f"\nend to end, file to lines: median of {args.rounds} rounds per page, summed over the set (s)")
    print(f"{'':<14}{'':>13}" + "".join(f"{n:>{width}}" for n in names))
    print(f"{'total':<14}{'':>13}" + "".join(f"{totals[n]:>{width}.2f}" for n in names))
    first = names[0]
    for n in names[1:]:
        print(f"ratio {first} / {n}: {totals[first] / totals[n]:.2f} (below 1: the sample is faster)")
    if "rapidocr" in read:
        short = [kind for kind in ocr_testset.KINDS
                 if sum(c for c, p in zip(read[first], pages) if p.kind == kind)
                 < sum(c for c, p in zip(read["rapidocr"], pages) if p.kind == kind)]
        if short:
            print(f"the sample reads fewer lines than rapidocr on: {', '.join(short)}")
            return 1
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image", nargs="?", type=Path, default=ROOT / "samples" / "data" / "ocr.png")
    ap.add_argument("--runs", type=int, default=10, help="interleaved runs of each pipeline")
    ap.add_argument("--blocks", type=int, default=3, help="blocks of runs per pipeline")
    ap.add_argument("--block-runs", type=int, default=5, help="runs per block")
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between blocks")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu", help="mlrt's device")
    ap.add_argument("--ort-only", action="store_true", help="time the onnxruntime pipeline alone")
    ap.add_argument("--testset", action="store_true", help="read samples/data/ocr_testset.py's documents instead")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds over the test set")
    args = ap.parse_args(argv)
    return testset(args) if args.testset else one_image(args)


if __name__ == "__main__":
    raise SystemExit(main())
