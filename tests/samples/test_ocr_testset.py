"""samples/ocr.py on documents as people photograph them (samples/data/ocr_testset.py):
tilted from -30 to 30 degrees, in perspective, photographed (blur, uneven light,
noise, JPEG), upside down, in two columns, receipts, paragraphs.  Per kind, the sample
reads every line (within the set's character error rate, spaces aside), prints the
pieces of one line as one line (a receipt's item and price may stay two), in reading
order, each with its quadrilateral reading along the text.  The scorer itself is
checked first, on made-up output.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "samples"))
sys.path.insert(0, str(ROOT / "samples" / "data"))

import ocr_models  # noqa: E402
import ocr_testset  # noqa: E402

MISSES = {}  # kind -> lines the sample may miss; none today (the set reads 108 of 108)


# -- the scorer --------------------------------------------------------------------------------------

def test_cer_counts_edits_over_the_truth_spaces_aside():
    assert ocr_testset.cer("Call 555 0142", "Call 555 0142") == 0
    assert ocr_testset.cer("Call5550142", "Call 555 0142") == 0
    assert ocr_testset.cer("Cal 555 0l42", "Call 555 0142") == pytest.approx(2 / 11)
    assert ocr_testset.cer("Ｃａｌｌ：", "Call:") == 0  # full-width forms, as the recognizer's alphabet has them


def _page():
    quad = lambda x, y, w, h: np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)  # noqa: E731
    lines = (ocr_testset.TruthLine("Latte large 4.50", quad(10, 10, 300, 30)),
             ocr_testset.TruthLine("TOTAL 17.98", quad(10, 60, 300, 30)))
    return ocr_testset.Page("receipt", "made_up", np.zeros((100, 320, 3), np.uint8), lines)


def test_score_joins_the_pieces_found_in_a_line_along_it():
    page = _page()
    found = [("4.50", [[250, 12], [300, 12], [300, 38], [250, 38]]), ("Latte large", [[10, 10], [120, 10],
                                                                                      [120, 40], [10, 40]]),
             ("TOTAL 17.9B", [[10, 62], [310, 62], [310, 88], [10, 88]]), ("noise", [[0, 95], [5, 95], [5, 99],
                                                                                      [0, 99]])]
    s = ocr_testset.score(page, found)
    assert s.texts == ("Latte large 4.50", "TOTAL 17.9B") and s.read == (True, True) and s.count == 2
    assert s.pieces == (2, 1) and s.in_order and s.misdirected == 0


def test_score_sees_wrong_order_and_upside_down_corners():
    page = _page()
    found = [("TOTAL 17.98", [[310, 88], [10, 88], [10, 62], [310, 62]]),  # top-left corner last: turned
             ("Latte large 4.50", [[10, 10], [310, 10], [310, 40], [10, 40]])]
    s = ocr_testset.score(page, found)
    assert s.count == 2 and not s.in_order and s.misdirected == 1
    assert ocr_testset.score(page, [("Latte", [[10, 10], [120, 10], [120, 40], [10, 40]])]).read == (False, False)


def test_the_set_has_every_kind_and_its_lines_lie_inside_their_pages():
    pages = ocr_testset.pages()
    assert {p.kind for p in pages} == set(ocr_testset.KINDS)
    for page in pages:
        h, w = page.image.shape[:2]
        assert page.lines and all((ln.quad >= 0).all() and (ln.quad <= (w, h)).all() for ln in page.lines)
    angles = [np.degrees(np.arctan2(*(ln.quad[1] - ln.quad[0])[::-1])) for p in pages for ln in p.lines]
    assert min(angles) < -29 and max(angles) > 29  # tilts over the whole -30..30 range, and upside down
    assert any(abs(a) > 150 for a in angles)


# -- the sample reading it ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ocr():
    try:
        paths = ocr_models.fetch_all()
    except ocr_models.FetchError as e:
        pytest.fail(f"could not fetch the OCR models: {e}", pytrace=False)
    from ocr import Ocr
    return Ocr(paths["det"], paths["rec"], paths["cls"])


@pytest.fixture(scope="module")
def pages():
    return ocr_testset.pages()


@pytest.mark.parametrize("kind", ocr_testset.KINDS)
def test_the_sample_reads_every_line(kind, ocr, pages, tmp_path):
    report = []
    for page in (p for p in pages if p.kind == kind):
        lines = ocr(ocr.read(page.save(tmp_path)))
        s = ocr_testset.score(page, [(ln.text, ln.quad) for ln in lines])
        missed = [f"{t!r} for {ln.text!r}" for ok, t, ln in zip(s.read, s.texts, page.lines) if not ok]
        if len(missed) > MISSES.get(kind, 0):
            report.append(f"{page.name}: read {s.count} of {len(page.lines)}; missed " + "; ".join(missed))
        most = 2 if kind == "receipt" else 1  # an item and its price may be two lines
        if max(s.pieces) > most:
            pieces = [t for t, n in zip(s.texts, s.pieces) if n > most]
            report.append(f"{page.name}: a line printed in pieces: {pieces}")
        if not s.in_order:
            report.append(f"{page.name}: not in reading order: {[ln.text for ln in lines]}")
        if s.misdirected:
            report.append(f"{page.name}: {s.misdirected} lines printed with corners not along their text")
    assert not report, "\n".join(report)
