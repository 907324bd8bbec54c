"""The OCR sample: its model fetcher, the onnxruntime baseline (benchmarks/ocr.py) and
samples/ocr.py itself reading samples/data/ocr.png word for word, on the CPU and on an
OpenCL device.  (The shared post-processing: test_ocr_post.py; documents as photographed:
test_ocr_testset.py.)

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

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
sys.path.insert(0, str(SAMPLES))

import ocr_models  # noqa: E402

IMAGE = SAMPLES / "data" / "ocr.png"
EXPECTED = (SAMPLES / "data" / "ocr.txt").read_text(encoding="utf-8").splitlines()
# a printed line: four x,y corners (the text's top-left first), the confidence, two spaces, the text
ROW = re.compile(r"^\s*((?:\d+,\d+\s+){4})[\d.]+  (.*)$", re.MULTILINE)


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
    assert ocr_models.fetch("cls") == models["cls"]
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
    det, rec, cls = (ocr_models.MODELS[k][0] for k in ("det", "rec", "cls"))
    bad = _wheel(tmp_path / "bad.whl", {det: models["det"].read_bytes(), rec: b"not a model", cls: b""})
    with pytest.raises(ocr_models.FetchError, match="sha256"):
        ocr_models.fetch_all(wheel=bad)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [det]  # no partial or wrong file left
    good = _wheel(tmp_path / "good.whl", {det: b"unused", rec: models["rec"].read_bytes(),
                                          cls: models["cls"].read_bytes()})
    paths = ocr_models.fetch_all(wheel=good)  # det is present and right: only rec and cls come from the wheel
    for key in ("det", "rec", "cls"):
        assert hashlib.sha256(paths[key].read_bytes()).hexdigest() == ocr_models.MODELS[key][1]


def test_fetch_failure_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("MLRT_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(ocr_models.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1))
    with pytest.raises(ocr_models.FetchError) as e:
        ocr_models.fetch("rec")
    assert "pip download" in str(e.value) and str(tmp_path / "ch_PP-OCRv4_rec_infer.onnx") in str(e.value)


# -- whole pipelines ---------------------------------------------------------------------------

def test_onnxruntime_baseline_reads_the_image(models):
    pytest.importorskip("onnxruntime")
    baseline = _load_baseline()
    ocr = baseline.OrtOcr(models["det"], models["rec"], models["cls"])
    lines = ocr(ocr.read(IMAGE))
    assert [ln.text for ln in lines] == EXPECTED
    assert all(ln.confidence > 0.9 for ln in lines)
    top = 0
    for ln in lines:  # level quadrilaterals inside the image, top to bottom
        (x0, y0), (x1, y1) = ln.quad.min(axis=0), ln.quad.max(axis=0)
        assert 0 <= x0 and x1 <= 960 and y0 >= top and abs(ln.quad[1, 1] - ln.quad[0, 1]) < 10
        top = (y0 + y1) / 2


def _sample(*args) -> str:
    out = subprocess.run([sys.executable, str(SAMPLES / "ocr.py"), *args], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_sample_prints_every_line():
    stdout = _sample()
    rows = ROW.findall(stdout)
    assert [text for _, text in rows] == EXPECTED, stdout
    for corners, _ in rows:  # top-left, top-right, bottom-right, bottom-left of a level line
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = (map(int, c.split(",")) for c in corners.split())
        assert x0 < x1 and y1 < y2 and x2 > x3 and y3 > y0 and abs(x0 - x3) < 5 and abs(x1 - x2) < 5
    assert re.search(r"^time: fetch\+load .* detection .* recognition .* total ", stdout, re.MULTILINE)


def test_sample_on_an_opencl_device_reads_the_same(models):
    from opencl_check import opencl_device  # (skips where no OpenCL device is usable)
    opencl_device()
    stdout = _sample("--device", "gpu")
    assert [text for _, text in ROW.findall(stdout)] == EXPECTED, stdout
