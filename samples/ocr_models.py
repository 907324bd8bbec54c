"""Fetch the PP-OCR models used by samples/ocr.py: text detection, direction, recognition.

    python samples/ocr_models.py [--wheel rapidocr_onnxruntime-1.4.4-py3-none-any.whl]

The three .onnx files (Apache-2.0, from PaddleOCR: the PP-OCRv4 detector and
recognizer and the PP-OCR mobile v2.0 text direction classifier) ship inside the
rapidocr-onnxruntime 1.4.4 wheel on PyPI.  The wheel is fetched as data with `pip
download` (nothing is installed or imported), the models are unzipped into the model
cache and checked against their sha256.  The cache is $MLRT_MODEL_CACHE, else
$XDG_CACHE_HOME/mlrt/models, else ~/.cache/mlrt/models.  Files are written to a temporary name and renamed, so an
interrupted fetch never leaves a truncated model behind; a second call finds the files
and returns at once.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "rapidocr-onnxruntime==1.4.4"
MEMBER_DIR = "rapidocr_onnxruntime/models/"
MODELS = {  # short name -> (file name, sha256)
    "det": ("ch_PP-OCRv4_det_infer.onnx", "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b"),
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
}

_verified: set[Path] = set()  # paths whose hash was checked in this process


class FetchError(RuntimeError):
    """The models could not be fetched or did not match their hash."""


def cache_dir() -> Path:
    if os.environ.get("MLRT_MODEL_CACHE"):
        return Path(os.environ["MLRT_MODEL_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "mlrt" / "models"


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _manual_steps() -> str:
    files = "\n".join(f"  {cache_dir() / fname}  (sha256 {sha})" for fname, sha in MODELS.values())
    return ("To fetch them another way, download rapidocr_onnxruntime-1.4.4-py3-none-any.whl from "
            "https://pypi.org/project/rapidocr-onnxruntime/1.4.4/#files "
            f"and run `python samples/ocr_models.py --wheel <the .whl>`, or copy {MEMBER_DIR}<name> from it to:\n{files}")


def _resolve(name: str) -> str:
    for short, (fname, _) in MODELS.items():
        if name in (short, fname):
            return short
    raise KeyError(f"unknown OCR model {name!r}; known: {', '.join(MODELS)}")


def _present(path: Path, sha: str) -> bool:
    """True when path holds the right model; a wrong file is deleted (it will be fetched again)."""
    if path in _verified:
        return True
    if not path.is_file():
        return False
    if _sha256(path) == sha:
        _verified.add(path)
        return True
    print(f"{path} does not match its sha256; deleting it and fetching it again", file=sys.stderr)
    path.unlink()
    return False


def _download_wheel(dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", WHEEL, "-d", str(dest)]
    print(f"fetching the OCR models: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    # pip's own progress goes to stderr (fd 2), so the caller's stdout stays its own
    try:
        rc = subprocess.run(cmd, stdout=2, stdin=subprocess.DEVNULL).returncode
    except OSError as e:
        raise FetchError(f"could not run pip ({e}).\n{_manual_steps()}") from e
    wheels = sorted(dest.glob("*.whl"))
    if rc != 0 or not wheels:
        raise FetchError(f"pip download {WHEEL} failed (exit status {rc}; no network to PyPI?).\n{_manual_steps()}")
    return wheels[0]


def _extract(wheel: Path, fname: str, sha: str) -> Path:
    """Unzip one model from the wheel to the cache: temporary file, hash check, rename."""
    target = cache_dir() / fname
    target.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(prefix=fname + ".", suffix=".part", dir=target.parent)
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(MEMBER_DIR + fname) as src, os.fdopen(fd, "wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                h.update(block)
                dst.write(block)
        if h.hexdigest() != sha:
            raise FetchError(f"{fname} from {wheel.name} has sha256 {h.hexdigest()}, expected {sha}; "
                             f"the file was deleted.\n{_manual_steps()}")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a model is an ordinary file
        os.replace(tmp, target)
    except KeyError as e:
        raise FetchError(f"{wheel.name} has no {MEMBER_DIR}{fname}.\n{_manual_steps()}") from e
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _verified.add(target)
    print(f"fetched {fname} ({target.stat().st_size / 1e6:.1f} MB) -> {target}", file=sys.stderr, flush=True)
    return target


def fetch_all(wheel: Path | None = None) -> dict[str, Path]:
    """Every model, fetched if missing: {"det": path, "rec": path, "cls": path}."""
    paths = {short: cache_dir() / fname for short, (fname, _) in MODELS.items()}
    missing = [short for short, (fname, sha) in MODELS.items() if not _present(paths[short], sha)]
    if missing:
        with tempfile.TemporaryDirectory(prefix="mlrt-ocr-") as tmp:
            whl = Path(wheel) if wheel else _download_wheel(Path(tmp))
            for short in missing:
                _extract(whl, *MODELS[short])
    return paths


def fetch(name: str) -> Path:
    """The path of one model ("det", "rec", "cls", or its file name), fetched if missing."""
    short = _resolve(name)
    fname, sha = MODELS[short]
    path = cache_dir() / fname
    return path if _present(path, sha) else fetch_all()[short]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", type=Path, help="take the models from this rapidocr-onnxruntime 1.4.4 wheel (no download)")
    args = ap.parse_args(argv)
    try:
        for short, path in fetch_all(args.wheel).items():
            print(f"{short}: {path}")
    except FetchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
