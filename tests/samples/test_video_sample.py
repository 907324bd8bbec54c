"""samples/video.py: a video written here with OpenCV's VideoWriter goes through
evaluate_stream with PP-OCRv4's detector; every frame is reported, in order, with the
five lines of the bundled OCR picture found in it."""

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
FRAMES = 4


def test_video_sample_finds_the_text_in_every_frame(tmp_path):
    sys.path.insert(0, str(SAMPLES))
    import ocr_models
    ocr_models.fetch("det")  # fails with the fetcher's message when the model cannot be had
    page = cv2.imread(str(SAMPLES / "data" / "ocr.png"))
    h, w = page.shape[:2]
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (w, h))
    assert writer.isOpened()
    for i in range(FRAMES):  # the page shifted a few pixels per frame
        writer.write(np.ascontiguousarray(np.roll(page, 3 * i, axis=1)))
    writer.release()
    out = subprocess.run([sys.executable, str(SAMPLES / "video.py"), str(path)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    frames = [ln for ln in lines if " text boxes " in ln]
    assert len(frames) == FRAMES, out.stdout
    stamps = [float(ln.split(" s ")[0]) for ln in frames]
    assert stamps == sorted(stamps) and stamps[0] == 0.0
    expected = len((SAMPLES / "data" / "ocr.txt").read_text().splitlines())
    assert all(ln.split(" s ")[1].strip().startswith(f"{expected} text boxes") for ln in frames), out.stdout
    assert lines[-1].startswith(f"{FRAMES} frames in ")
